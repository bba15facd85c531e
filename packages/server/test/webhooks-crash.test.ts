import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startReceiver, type Receiver } from './webhook-receiver.js';
import { tmpDir } from './helpers.js';
import { freePort } from './svc-process.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const KEY = `svc_test_${'Crash0Test1Key2'.padEnd(32, 'x')}`;
const EVENTS = 1000;


describe('webhook delivery survives a SIGKILL', () => {
  let rx: Receiver;
  let child: ChildProcess | null = null;
  let output = '';
  afterAll(async () => {
    child?.kill('SIGKILL');
    await rx?.close();
  });

  function startServer(dataDir: string, port: number): Promise<ChildProcess> {
    const p = spawn(process.execPath, ['--import', 'tsx', 'packages/server/src/main.ts', 'serve'], {
      cwd: ROOT,
      env: {
        ...process.env,
        SVC_DATA_DIR: dataDir,
        SVC_PORT: String(port),
        SVC_HOST: '127.0.0.1',
        SVC_SIMULATOR: 'off',
        SVC_BOOTSTRAP_KEY: KEY,
        SVC_WEBHOOK_ALLOW_PRIVATE: 'on',
        // A short timeout keeps the lease short: rows held by the killed process return sooner.
        SVC_WEBHOOK_TIMEOUT_MS: '1000',
        SVC_LOG_LEVEL: 'warn',
        SVC_DATABASE_URL: '',
        SVC_REDIS_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    p.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    p.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    return new Promise((resolve, reject) => {
      const end = Date.now() + 90_000;
      const poll = async () => {
        if (p.exitCode !== null) return reject(new Error(`server exited ${p.exitCode}:\n${output}`));
        try {
          const res = await fetch(`http://127.0.0.1:${port}/healthz`);
          if (res.ok) return resolve(p);
        } catch {
          // not listening yet
        }
        if (Date.now() > end) return reject(new Error(`server did not start:\n${output}`));
        setTimeout(poll, 100);
      };
      void poll();
    });
  }

  it('delivers every one of 1,000 events after the server is killed mid-delivery', { timeout: 240_000 }, async () => {
    const dataDir = tmpDir('svc-crash-');
    fs.copyFileSync(inject('sqliteTemplate'), path.join(dataDir, 'svc.db'));
    rx = await startReceiver();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    child = await startServer(dataDir, port);

    const ep = await fetch(`${base}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: `${rx.url}/slow/20/crash`, tier: 'confirmed' }) });
    expect(ep.status).toBe(201);
    const games = (await (await fetch(`${base}/v1/games?sport=soccer&status=scheduled&limit=1`, { headers })).json()).data;
    const game = games[0];
    const competitor = game.competitors[0].entity_id;
    // Official plays 31 s apart: each is its own confirmed event (the consensus window is 30 s).
    const start = Date.now() - EVENTS * 31_000;
    const plays = Array.from({ length: EVENTS }, (_, i) => ({
      period: { unit: 'half', num: 1, label: '1st half' },
      competitor_id: competitor,
      event_type: 'goal',
      points: 1,
      ts: new Date(start + i * 31_000).toISOString(),
    }));
    for (let i = 0; i < EVENTS; i += 500) {
      const res = await fetch(`${base}/v1/competitions/${game.competition_id}/plays`, { method: 'POST', headers, body: JSON.stringify({ plays: plays.slice(i, i + 500) }) });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    const expected = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: { data: { id: string; tier: string }[]; next_cursor: string | null } = await (
        await fetch(`${base}/v1/games/${game.id}/events?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { headers })
      ).json();
      for (const e of page.data) if (e.tier === 'confirmed') expected.add(e.id);
      cursor = page.next_cursor;
    } while (cursor);
    expect(expected.size).toBe(EVENTS);

    const distinct = () => new Set(rx.header('x-svc-event-id').filter(Boolean)).size;
    await rx.waitFor(() => distinct() >= 100, 30_000, '100 deliveries before the kill');
    child.kill('SIGKILL');
    await new Promise((r) => child?.once('exit', r));
    const beforeRestart = distinct();
    expect(beforeRestart).toBeLessThan(EVENTS);

    child = await startServer(dataDir, port);
    await rx.waitFor(() => distinct() >= EVENTS, 120_000, 'every event after the restart');
    const seen = new Set(rx.header('x-svc-event-id'));
    for (const id of expected) expect(seen.has(id), id).toBe(true);
    // At least once: a few attempts in flight at the kill may arrive twice, and that is allowed.
    expect(rx.requests.length).toBeGreaterThanOrEqual(EVENTS);
    child.kill('SIGTERM');
    await new Promise((r) => child?.once('exit', r));
    child = null;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
