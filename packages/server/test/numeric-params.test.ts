import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, listen, testApp, type TestApp } from './helpers.js';

interface Operation {
  parameters?: { name: string; in: string; schema?: { type?: string; minimum?: number; maximum?: number } }[];
}

interface NumericParam {
  name: string;
  minimum: number;
  maximum: number;
}

/** Every GET route whose query declares an integer, with its range, from the app's own OpenAPI document. */
function numericQueryRoutes(t: TestApp): { path: string; params: NumericParam[] }[] {
  const doc = t.app.swagger() as { paths: Record<string, Record<string, Operation>> };
  const out: { path: string; params: NumericParam[] }[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    const params = (ops.get?.parameters ?? []).filter((p) => p.in === 'query' && (p.schema?.type === 'integer' || p.schema?.type === 'number'));
    if (params.length > 0) out.push({ path, params: params.map((p) => ({ name: p.name, minimum: p.schema?.minimum ?? 1, maximum: p.schema?.maximum ?? 1000 })) });
  }
  return out;
}

describe('numeric query parameters', () => {
  let t: TestApp;
  let base: string;
  let key: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await testApp();
    key = await t.key();
    base = (await listen(t)).http;
    const get = async (url: string) => ((await (await fetch(`${base}${url}`, { headers: auth(key) })).json()) as { data: Record<string, string>[] }).data[0];
    const game = await get('/v1/games?league=wc&season=2022&limit=1');
    ids['/v1/games/{id}'] = game.id;
    ids['/v1/competitions/{id}'] = game.competition_id;
    ids['/v1/teams/{id}'] = (await get('/v1/teams?league=wc&limit=1')).id;
    ids['/v1/players/{id}'] = 'player:wc:lionel-messi';
    const hook = await fetch(`${base}/v1/webhooks`, {
      method: 'POST',
      headers: { ...auth(key), 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://93.184.215.14/hook', tier: 'confirmed' }),
    });
    ids['/v1/webhooks/{id}'] = ((await hook.json()) as { data: { id: string } }).data.id;
  });
  afterAll(async () => t.close());

  /** Query parameters a route requires besides the one under test. */
  const required: Record<string, string> = { '/v1/leaders': 'league=wc&' };
  const concrete = (path: string): string => {
    const prefix = Object.keys(ids).find((p) => path.startsWith(p));
    return prefix ? path.replace('{id}', encodeURIComponent(ids[prefix])) : path;
  };

  // Numbers a client could mean but that are not a plain decimal integer, and numbers no page has.
  const malformed = ['Infinity', '-Infinity', '+Infinity', '1e1000', '-1e1000', 'NaN', '1e2', '0x10', '0b11', '0o7', '+5', ' 5', '5 ', '10.0', '1.5', '1e-7', '5abc', '', '-0', '1_0', '٣', '９', '99999999999999999999'];

  it('answers every malformed or out-of-range number with a 400 naming the param, on every list route', async () => {
    const routes = numericQueryRoutes(t);
    expect(routes.map((r) => r.path)).toEqual(expect.arrayContaining(['/v1/teams', '/v1/games', '/v1/webhooks/{id}/deliveries', '/v1/competitions/{id}/plays']));
    for (const { path, params } of routes) {
      const url = concrete(path);
      for (const { name: param, minimum, maximum } of params) {
        // Each parameter's own range, from the schema: a limit's 1..1000, a long poll's 0..30.
        for (const value of [...malformed, String(minimum - 1), String(maximum + 1)]) {
          const res = await fetch(`${base}${url}?${required[path] ?? ''}${param}=${encodeURIComponent(value)}`, { headers: auth(key) });
          const body = (await res.json()) as { error?: { type: string; param?: string; request_id: string } };
          expect(res.status, `${url} ${param}=${JSON.stringify(value)}: ${JSON.stringify(body)}`).toBe(400);
          expect(body.error, `${url} ${param}=${JSON.stringify(value)}`).toMatchObject({ type: 'invalid_request', param });
          expect(res.headers.get('x-request-id')).toBe(body.error?.request_id);
        }
        // Given twice is ambiguous, not a list.
        const twice = await fetch(`${base}${url}?${required[path] ?? ''}${param}=1&${param}=2`, { headers: auth(key) });
        expect(twice.status, `${url} ${param} twice`).toBe(400);
        // The plain forms still work.
        // Not the maximum itself: a long poll's `wait=30` would hold the answer 30 s.
        for (const value of [String(minimum), `00${minimum + 1}`]) {
          const ok = await fetch(`${base}${url}?${required[path] ?? ''}${param}=${value}`, { headers: auth(key) });
          expect(ok.status, `${url} ${param}=${value}`).toBe(200);
          await ok.arrayBuffer();
        }
      }
    }
  });
});
