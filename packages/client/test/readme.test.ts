import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../server/test/helpers.js';
import { freePort, goalPlays, liveSvc, ROOT, type LiveSvc } from './support.js';

/** A ```ts block of a README, under the heading it belongs to. */
interface Snippet {
  readme: string;
  heading: string;
  code: string;
  file: string;
}

const READMES = ['packages/client/README.md', 'README.md'];

function snippetsOf(readme: string, dir: string): Snippet[] {
  const out: Snippet[] = [];
  let heading = '';
  let block: string[] | null = null;
  for (const line of fs.readFileSync(path.join(ROOT, readme), 'utf8').split('\n')) {
    if (block) {
      if (line.startsWith('```')) {
        const file = path.join(dir, `${readme.replace(/\W+/g, '-')}-${out.length + 1}.ts`);
        out.push({ readme, heading, code: block.join('\n'), file });
        block = null;
      } else block.push(line);
    } else if (line.startsWith('```ts')) block = [];
    else if (/^#+ /.test(line)) heading = line.replace(/^#+ /, '');
  }
  return out;
}

/** What each snippet must print (the README's promise in a few words); every snippet prints something. */
const EXPECTED: Record<string, RegExp[]> = {
  'Quick start': [/^internal \[/m],
  "All the client's options": [/^GET \/v1\/me: 200 in \d+ ms$/m, /^internal$/m],
  'Reference data, competitions, games': [
    /^player:wc:lionel-messi Lionel Messi$/m,
    /Lusail Stadium Lusail 88966/,
    /^wc_2022 64 172$/m,
    /^FIFA World Cup 2022 · Final team:wc:ARG 3 – team:wc:FRA 3$/m,
    /^1 23' penalty_goal \{ home: 1, away: 0 \}$/m,
    /^23' ARG 1 1$/m,
  ],
  Pagination: [/^soccer_wc_21728$/m, /^10 \S+$/m],
  'Standings, box scores, leaders': [
    /^Group C 1 team:wc:ARG 6 5-2$/m,
    /^team:wc:ARG 3 \(4 pens\) – team:wc:FRA 3 \(2 pens\) winner team:wc:ARG$/m,
    /^1 player:wc:kylian-mbappe 8$/m,
    /^2022 7 goals 3 penalties 4$/m,
  ],
  'The HTTP answer: status, headers, request id': [/^Argentina 200 req_\S+ \d+$/m, /^application\/json; charset=utf-8 \{"data":\{"id":"lusail-stadium"/m, /\] req_\S+$/m],
  Logging: [/^info svc GET \/v1\/me 200 \d+ms request_id=req_\S+$/m, /^info svc GET \/v1\/teams\/team%3Awc%3AZZZ 404 \d+ms request_id=req_\S+$/m],
  'Per-request options': [/^Argentina$/m],
  'Writes: reports, official plays, idempotency': [/^rpt_\S+ evt_\d+ (provisional|confirmed)$/m, /^1$/m, /^\d+ \{ home: \d+, away: \d+ \}$/m],
  Errors: [/^404 not_found resource_not_found req_\S+$/m],
  'Live stream': [/^resume from evt_\d+$/m],
  'Bulk export': [/^6 events in the final$/m, /^FIFA World Cup 2022 · Final$/m],
  Webhooks: [/^we_\S+ whsec_$/m, /^\d+ enabled$/m],
  'Reporters (operators)': [/^0 suspended$/m, /^404 resource_not_found$/m],
  'Sandbox replays': [/^rpl_\S+ soccer_\d+ scheduled$/m, /^provisional ARG 1$/m, /^confirmed FRA 3$/m],
  'Verifying a delivery': [/^listening$/m, /^test event evt_test_/m, /^rejected: signature_mismatch$/m, /^event evt_\d+ soccer_\d+ \S+ 1$/m],
  'Signing test requests for your own tests': [/^evt_000000000001 test$/m],
  'TypeScript client': [/^soccer_wc_21728 FIFA World Cup 2022 · Final$/m, /^FIFA World Cup 2022 · Final req_\S+$/m, /^soccer_\d+ \S+ 1$/m],
};

/** Snippets that listen for events: the test makes some while they run. */
const FEEDS = new Set(['Live stream', 'TypeScript client']);
const RECEIVER = 'Verifying a delivery';

interface Run {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

function run(s: Snippet, env: Record<string, string>): Run {
  const child = spawn(process.execPath, ['--conditions=@svc/source', '--import', 'tsx', s.file], {
    cwd: path.dirname(s.file),
    env: { ...process.env, SVC_LOG: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  return { child, out: () => (err ? `${out}\n[stderr]\n${err}` : out), exited };
}

describe('README snippets: each TypeScript block type-checks strictly and runs against a real svc', () => {
  // Inside the repository (a git-ignored directory) so that `@svc/client` resolves to the workspace's sources.
  fs.mkdirSync(path.join(ROOT, '.vitest-tmp'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, '.vitest-tmp', 'readme-'));
  const all = READMES.flatMap((r) => snippetsOf(r, dir));
  let s: LiveSvc;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    for (const snippet of all) fs.writeFileSync(snippet.file, snippet.code);
    s = await liveSvc({ config: { webhookAllowPrivate: true, webhookTimeoutMs: 2000 } });
    s.t.services.webhooks.dispatcher.start();
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await s?.t.services.webhooks.dispatcher.stop();
    await s?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finds the blocks, and knows what each should print', () => {
    expect(all.filter((x) => x.readme === 'packages/client/README.md').length).toBeGreaterThanOrEqual(14);
    expect(all.filter((x) => x.readme === 'README.md')).toHaveLength(1);
    for (const x of all) expect(EXPECTED[x.heading], `${x.readme} § ${x.heading}`).toBeDefined();
  });

  it('every block compiles with strict and exactOptionalPropertyTypes', { timeout: 120_000 }, () => {
    const program = ts.createProgram(
      all.map((x) => x.file),
      {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        skipLibCheck: true,
        // The workspace's packages export their .ts sources under this condition.
        customConditions: ['@svc/source'],
        allowImportingTsExtensions: true,
        types: ['node'],
        typeRoots: [path.join(ROOT, 'node_modules/@types')],
      },
    );
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file ? `${path.relative(ROOT, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : '';
      const snippet = all.find((x) => x.file === d.file?.fileName);
      return `${snippet ? `${snippet.readme} § ${snippet.heading}` : where}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
    expect(problems).toEqual([]);
  });

  const env = () => ({ SVC_API_KEY: s.key, SVC_BASE_URL: s.baseUrl });

  /** Official plays for a soccer game of today, 31 s apart (each its own event), until `stop`. */
  async function feed(stop: () => boolean): Promise<void> {
    const { data } = await s.svc.games.list({ sport: 'soccer', date: 'today', limit: 100 });
    const game = data.find((g) => g.status !== 'final');
    if (!game) throw new Error('no soccer game left today');
    const competitor = game.competitors[0].entity_id;
    for (let k = 1; !stop(); k++) {
      const [play] = goalPlays(competitor, 1, Date.now() + k * 31_000);
      await s.svc.plays.create(game.competition_id, play);
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  for (const snippet of all) {
    it(`${snippet.readme} § ${snippet.heading}`, async () => {
      if (snippet.heading === RECEIVER) {
        const port = await freePort();
        const ep = await s.svc.webhooks.create({ url: `http://127.0.0.1:${port}/hook`, tier: 'confirmed', sports: ['soccer'] });
        const r = run(snippet, { ...env(), PORT: String(port), SVC_WEBHOOK_SECRET: ep.secret });
        children.push(r.child);
        try {
          await until(() => r.out().includes('listening'), 30_000, `listening (${r.out()})`);
          expect(await s.svc.webhooks.test(ep.id)).toMatchObject({ delivered: true, status_code: 200 });
          const forged = await fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', body: '{}', headers: { 'X-SVC-Signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` } });
          expect(forged.status).toBe(400);
          let delivered = false;
          const feeding = feed(() => delivered);
          await until(() => /^event evt_/m.test(r.out()), 30_000, `a delivered event (${r.out()})`).finally(() => (delivered = true));
          await feeding;
        } finally {
          r.child.kill();
          await r.exited;
          await s.svc.webhooks.delete(ep.id);
        }
        for (const re of EXPECTED[snippet.heading]) expect(r.out()).toMatch(re);
        return;
      }
      const r = run(snippet, env());
      children.push(r.child);
      let done = false;
      const feeding = FEEDS.has(snippet.heading) ? feed(() => done) : Promise.resolve();
      const code = await r.exited.finally(() => (done = true));
      await feeding;
      expect(code, r.out()).toBe(0);
      expect(r.out().trim(), 'prints something').not.toBe('');
      expect(r.out()).not.toContain('[stderr]');
      for (const re of EXPECTED[snippet.heading] ?? []) expect(r.out()).toMatch(re);
    });
  }
});
