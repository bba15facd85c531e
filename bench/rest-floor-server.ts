// The floor for bench/rest's walk: a bare node:http server with better-sqlite3 running the same
// keyset query as `GET /v1/competitions?date=…&limit=…&cursor=…` on the same SQLite file, with
// statements prepared once and the page serialised with JSON.stringify. No auth, no limits, no
// validation beyond what the query needs: the least a Node server can do for this answer.
// Run: node --import tsx bench/rest-floor-server.ts <svc.db> <port> [ceiling]
// With `ceiling`, every date's answer is built once at start and served from memory by URL: the
// bare same-bytes ceiling for the walk.
import http from 'node:http';
import Database from 'better-sqlite3';

const [file, port, mode] = process.argv.slice(2);
const db = new Database(file, { readonly: true, fileMustExist: true });
db.pragma('cache_size = -65536');

interface CompetitionRow {
  id: string;
  sport: string;
  league: string;
  season_label: string;
  season_id: string;
  date: string;
  start_time: string | null;
  status: string;
  venue_id: string | null;
  name: string | null;
  synthetic: number;
}
interface CompetitorRow {
  competition_id: string;
  entity_type: string;
  entity_id: string;
  role: string;
  score: number;
}

const select = `select c.id, c.sport, c.league, s.label as season_label, c.season_id, c.date, c.start_time, c.status, c.venue_id, c.name, c.synthetic
  from competitions c join seasons s on s.id = c.season_id`;
const firstPage = db.prepare<[string, number], CompetitionRow>(`${select} where c.date = ? order by c.date, c.id limit ?`);
const laterPage = db.prepare<[string, string, string, number], CompetitionRow>(
  `${select} where c.date = ? and (c.date, c.id) > (?, ?) order by c.date, c.id limit ?`,
);
const competitorStatements = new Map<number, Database.Statement<string[], CompetitorRow>>();
function competitorsOf(ids: string[]): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  if (ids.length === 0) return out;
  let st = competitorStatements.get(ids.length);
  if (!st) {
    st = db.prepare<string[], CompetitorRow>(
      `select competition_id, entity_type, entity_id, role, score from competitors where competition_id in (${ids.map(() => '?').join(',')}) order by competition_id, idx`,
    );
    competitorStatements.set(ids.length, st);
  }
  for (const r of st.all(...ids)) {
    let list = out.get(r.competition_id);
    if (!list) out.set(r.competition_id, (list = []));
    list.push({ entity_type: r.entity_type, entity_id: r.entity_id, role: r.role, score: r.score });
  }
  return out;
}

function page(date: string, limit: number, cursor: string | null): string {
  let rows: CompetitionRow[];
  if (cursor) {
    const [d, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    rows = laterPage.all(date, d, id, limit + 1);
  } else rows = firstPage.all(date, limit + 1);
  const more = rows.length > limit;
  if (more) rows.length = limit;
  const competitors = competitorsOf(rows.map((r) => r.id));
  const data = rows.map((r) => ({
    id: r.id,
    sport: r.sport,
    league: r.league,
    season: r.season_label,
    season_id: r.season_id,
    date: r.date,
    start_time: r.start_time,
    status: r.status,
    venue: r.venue_id,
    name: r.name,
    competitors: competitors.get(r.id) ?? [],
    synthetic: r.synthetic === 1,
  }));
  const last = rows[rows.length - 1];
  return JSON.stringify({ data, next_cursor: more ? Buffer.from(JSON.stringify([last.date, last.id])).toString('base64url') : null });
}

function answer(url: string): string | null {
  const q = new URL(url, 'http://x').searchParams;
  const date = q.get('date');
  if (!date) return null;
  return page(date, Number(q.get('limit') ?? 100), q.get('cursor'));
}

const cached = new Map<string, Buffer>();
if (mode === 'ceiling') {
  for (const { date } of db.prepare<[], { date: string }>('select distinct date from competitions').all()) {
    const url = `/v1/competitions?date=${date}&limit=100`;
    cached.set(url, Buffer.from(answer(url) ?? ''));
  }
}

http
  .createServer((req, res) => {
    const url = req.url ?? '/';
    const body = mode === 'ceiling' ? cached.get(url) : (() => {
      const s = answer(url);
      return s === null ? undefined : Buffer.from(s);
    })();
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  })
  .listen(Number(port), '127.0.0.1', () => process.stdout.write(`${mode === 'ceiling' ? 'ceiling' : 'floor'} server ready\n`));
