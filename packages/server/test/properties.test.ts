import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, testApp, type TestApp } from './helpers.js';

const LISTS = ['/v1/teams', '/v1/players', '/v1/venues', '/v1/seasons', '/v1/competitions', '/v1/games', '/v1/teams/team:wc:BRA/roster'];
const NAMES = ['sport', 'league', 'season', 'date', 'team', 'player', 'status', 'search', 'limit', 'cursor', 'x', '', 'limit[]', '__proto__', 'constructor'];
const VALUES = fc.oneof(
  fc.constantFrom('soccer', 'wc', 'today', '2022-12-18', 'team:wc:BRA', 'final', '0', '-1', '1001', '1e3', 'null', '', '%', '\u0000', 'true', '[]', '{}', 'AAAA', 'eyJ4Ijox'),
  fc.string({ maxLength: 40 }),
  fc.integer().map(String),
);

describe('random query strings against every list endpoint', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await testApp();
    key = await t.key();
  });
  afterAll(async () => t.close());

  it('never answer 5xx, and every error is the documented body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...LISTS),
        fc.array(fc.tuple(fc.oneof(fc.constantFrom(...NAMES), fc.string({ maxLength: 12 })), VALUES), { maxLength: 4 }),
        async (path, pairs) => {
          const qs = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
          const res = await t.app.inject({ method: 'GET', url: `${path}?${qs}`, headers: auth(key) });
          expect(res.statusCode, `${path}?${qs} → ${res.body}`).toBeLessThan(500);
          const body = res.json();
          if (res.statusCode >= 400) {
            expect(body.error.request_id).toMatch(/^req_/);
            expect(['invalid_request', 'permission_error', 'not_found']).toContain(body.error.type);
            expect(typeof body.error.code).toBe('string');
            expect(typeof body.error.message).toBe('string');
          } else {
            expect(Array.isArray(body.data)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
