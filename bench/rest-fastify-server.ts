// A middle baseline for bench/rest's walk: bare Fastify (no logger, no hooks, no query schema)
// serving `GET /v1/competitions?date=…&limit=…` from svc's own CompetitionRepo with svc's
// response schema. Between the floor (bare node:http + better-sqlite3) and svc, it shows what
// the framework and the repository cost and what svc's per-request policies (authentication,
// rate-limit headers, request ids, validation, response cache, metrics, logging) add.
// Run: node --import tsx bench/rest-fastify-server.ts <data dir> <port>
import Fastify from 'fastify';
import { Competition, ListOf } from '@svc/schema';
import { loadConfig, openDb, CompetitionRepo } from '@svc/server';

const [dataDir, port] = process.argv.slice(2);
const db = await openDb(loadConfig({ SVC_DATA_DIR: dataDir, SVC_SIMULATOR: 'off' }));
const repo = new CompetitionRepo(db);
const app = Fastify({ logger: false });
app.get('/v1/competitions', { schema: { response: { 200: ListOf(Competition) } } }, async (request) => {
  const q = new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1));
  return repo.list({ sports: null, leagues: null, viewerKeyId: null }, { date: q.get('date') ?? '' }, { limit: Number(q.get('limit') ?? 100) });
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.stdout.write('fastify server ready\n');
