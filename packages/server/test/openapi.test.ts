import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { testApp, type TestApp } from './helpers.js';

describe('OpenAPI', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(async () => t.close());

  it('is a valid OpenAPI 3.1 document covering every public route', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    for (const path of ['/v1/teams', '/v1/teams/{id}', '/v1/teams/{id}/roster', '/v1/players', '/v1/players/{id}', '/v1/venues', '/v1/venues/{id}', '/v1/seasons', '/v1/competitions', '/v1/competitions/{id}', '/v1/competitions/{id}/plays', '/v1/games', '/v1/games/{id}', '/v1/games/{id}/events', '/v1/me', '/v1/status', '/v1/webhooks/{id}/test']) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
  });
});
