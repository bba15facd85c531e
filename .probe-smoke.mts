import { buildApp } from './packages/server/src/app.ts';
import { loadConfig } from './packages/server/src/config.ts';
import { openDb } from './packages/server/src/store/db.ts';
const db = await openDb({ dataDir: '/tmp/exp-smoke', databaseUrl: null });
const config = loadConfig({ SVC_DATA_DIR: '/tmp/exp-smoke', SVC_SIMULATOR: 'off' });
const { app, services } = await buildApp({ config, db, clock: { now: () => Date.now() } });
await app.ready();
const { key } = await services.keys.create({ name: 't', plan: 'internal', products: ['archive'], sports: null, leagues: null }, new Date());
const h = { authorization: `Bearer ${key}` };
for (const url of ['/v1/export?league=wc&season=2022', '/v1/export?league=wc&season=2022&entity=plays', '/v1/export?league=wc&season=wc_2022&entity=competitions', '/v1/export?league=wc', '/v1/export?league=wc&season=2022&from=2022-13-01', '/v1/export?league=wc&season=2022&entity=x', '/v1/export?league=wc&season=1999']) {
  const r = await app.inject({ method: 'GET', url, headers: h });
  const lines = r.body.split('\n');
  console.log(url, r.statusCode, r.headers['content-type'], r.headers['content-disposition'], lines.length - 1, lines[0].slice(0, 300));
}
const r = await app.inject({ method: 'GET', url: '/v1/export?league=wc&season=2022', headers: { ...h, 'accept-encoding': 'gzip' } });
console.log(r.headers['content-encoding'], r.rawPayload.length);
await app.close(); await db.close();
