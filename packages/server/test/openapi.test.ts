import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ClientMessage, ControlFrame, StatusEvent, WireScoreEvent } from '@svc/schema';
import { ARCHIVE_EXAMPLES } from '../src/openapi/examples.js';
import { auth, testApp, tmpDir, type TestApp } from './helpers.js';

/** A parsed JSON document, walked as the tests of answers walk `res.json()`. */
type Json = ReturnType<typeof JSON.parse>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const ROOT = path.resolve(import.meta.dirname, '../../..');

describe('OpenAPI', () => {
  let t: TestApp;
  let doc: Json;
  beforeAll(async () => {
    t = await testApp();
    doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  });
  afterAll(async () => t.close());

  const operations = (): [string, string, Json][] =>
    Object.entries<Json>(doc.paths).flatMap(([p, item]) => METHODS.filter((m) => item[m]).map((m): [string, string, Json] => [m, p, item[m]]));

  it('is a valid OpenAPI 3.1 document covering every public route', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    for (const path of ['/v1/teams', '/v1/teams/{id}', '/v1/teams/{id}/roster', '/v1/players', '/v1/players/{id}', '/v1/venues', '/v1/venues/{id}', '/v1/seasons', '/v1/competitions', '/v1/competitions/{id}', '/v1/competitions/{id}/plays', '/v1/games', '/v1/games/{id}', '/v1/games/{id}/events', '/v1/me', '/v1/status', '/v1/webhooks/{id}/test']) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
  });

  it('gives every operation a unique operationId, a summary and a description, and no response a default description', () => {
    const ids = new Set<string>();
    for (const [method, p, op] of operations()) {
      const where = `${method.toUpperCase()} ${p}`;
      expect(op.operationId, where).toMatch(/^[a-z][A-Za-z]+$/);
      expect(ids.has(op.operationId), `${where}: duplicate ${op.operationId}`).toBe(false);
      ids.add(op.operationId);
      expect(op.summary, where).toBeTruthy();
      expect(op.description, where).toBeTruthy();
      for (const [status, r] of Object.entries<Json>(op.responses)) {
        const response = r.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r;
        expect(response, `${where} ${status}`).toBeDefined();
        expect(response.description, `${where} ${status}`).not.toBe('Default Response');
        expect(response.description.length, `${where} ${status}`).toBeGreaterThan(5);
      }
    }
    for (const id of ['listTeams', 'getTeam', 'listCompetitions', 'listGameEvents', 'createReports', 'createPlays', 'createWebhook', 'listWebhooks', 'updateWebhook', 'rotateWebhookSecret', 'exportRecords']) expect(ids).toContain(id);
    expect(JSON.stringify(doc)).not.toContain('Default Response');
  });

  it('names its records, sets servers and declares the headers of every answer', () => {
    expect(doc.servers?.length).toBeGreaterThan(0);
    const schemas = Object.keys(doc.components.schemas);
    for (const name of ['Team', 'Player', 'Venue', 'Season', 'Competition', 'Game', 'Play', 'Event', 'WireEvent', 'WebhookTestEvent', 'WebhookEndpoint', 'WebhookDelivery', 'Notification', 'Error', 'Me']) expect(schemas).toContain(name);
    expect(schemas.filter((s) => /^def-\d+$/.test(s))).toEqual([]);
    expect(Object.keys(doc.components.headers).sort()).toEqual(['ETag', 'Idempotent-Replayed', 'Original-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Changes-Cursor', 'X-Request-Id'].sort());
    expect(Object.keys(doc.components.responses.TooManyRequests.headers)).toContain('Retry-After');
    for (const [method, p, op] of operations()) {
      const ok = Object.entries<Json>(op.responses).filter(([s]) => s.startsWith('2'));
      expect(ok.length, `${method} ${p}`).toBeGreaterThan(0);
      for (const [, r] of ok) {
        expect(Object.keys(r.headers), `${method} ${p}`).toContain('X-Request-Id');
        if (op.security?.length !== 0) expect(Object.keys(r.headers), `${method} ${p}`).toContain('RateLimit-Remaining');
        if (method === 'post') expect(Object.keys(r.headers), `${method} ${p}`).toContain('Idempotent-Replayed');
      }
      if (method === 'post') {
        expect(op.parameters, `${method} ${p}`).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
        expect(op.responses['409'], `${method} ${p}`).toEqual({ $ref: '#/components/responses/Conflict' });
      }
    }
    // The reads a scoreboard polls declare their ETag and the 304 that If-None-Match earns.
    for (const p of ['/v1/standings', '/v1/leaders', '/v1/competitions/{id}/boxscore', '/v1/players/{id}/stats']) {
      expect(Object.keys(doc.paths[p].get.responses['200'].headers), p).toContain('ETag');
      expect(doc.paths[p].get.responses['304'].description, p).toMatch(/If-None-Match/);
    }
    // Codes in the error answers come from the catalogue.
    expect(doc.components.responses.Conflict.description).toContain('`idempotency_key_reused`');
    expect(doc.paths['/v1/teams'].get.responses['200'].content['application/json'].schema.properties.data.items).toEqual({ $ref: '#/components/schemas/Team' });
    expect(doc.paths['/v1/webhooks'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateWebhookInput' });
  });

  it('gives every operation a success example, every request body an example and every parameter a description (counted)', () => {
    const parameter = (p: Json): Json => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p);
    const count = { operations: 0, withExample: 0, bodies: 0, bodiesWithExample: 0, parameters: 0, described: 0 };
    const missing: string[] = [];
    const webhookOps = Object.entries<Json>(doc.webhooks).map(([name, item]): [string, string, Json] => ['post', `webhooks.${name}`, item.post]);
    for (const [method, p, op] of [...operations(), ...webhookOps]) {
      const where = `${method.toUpperCase()} ${p}`;
      const webhook = p.startsWith('webhooks.');
      if (!webhook) {
        count.operations++;
        const media = Object.entries<Json>(op.responses)
          .filter(([status]) => status.startsWith('2'))
          .flatMap(([, r]) => Object.values<Json>(r.content ?? {}));
        if (media.length > 0 && media.every((m) => Object.keys(m.examples ?? {}).length > 0)) count.withExample++;
        else missing.push(`${where}: a success answer without an example`);
      }
      if (op.requestBody) {
        count.bodies++;
        const media = Object.values<Json>(op.requestBody.content);
        if (media.every((m) => Object.values<Json>(m.examples ?? {}).some((e) => e.value !== undefined && typeof e.summary === 'string'))) count.bodiesWithExample++;
        else missing.push(`${where}: a request body without an example`);
      }
      for (const raw of op.parameters ?? []) {
        const par = parameter(raw);
        count.parameters++;
        if (typeof par.description === 'string' && par.description.length > 12) count.described++;
        else missing.push(`${where}: ${par.in} parameter ${par.name} without a description`);
      }
    }
    expect(missing).toEqual([]);
    expect(count.operations).toBeGreaterThanOrEqual(31);
    expect(count.bodies).toBeGreaterThanOrEqual(7);
    expect(count.parameters).toBeGreaterThanOrEqual(83);
    expect(count).toEqual({ ...count, withExample: count.operations, bodiesWithExample: count.bodies, described: count.parameters });
  });

  it('examples read as served: a page of the archive, the record inside {data}, a batch body beside a single one', () => {
    const example = (p: string, method: string, status: string): Json => Object.values<Json>(doc.paths[p][method].responses[status].content['application/json'].examples)[0].value;
    expect(example('/v1/teams', 'get', '200')).toEqual({ data: [ARCHIVE_EXAMPLES.team], next_cursor: expect.any(String) });
    expect(example('/v1/games/{id}', 'get', '200')).toEqual({ data: ARCHIVE_EXAMPLES.game });
    expect(example('/v1/games/{id}/events', 'get', '200').data).toEqual([ARCHIVE_EXAMPLES.event]);
    const lines = doc.paths['/v1/export'].get.responses['200'].content['application/x-ndjson'].examples;
    expect(Object.fromEntries(Object.entries<Json>(lines).map(([k, v]) => [k, v.value]))).toEqual({ events: ARCHIVE_EXAMPLES.event, plays: ARCHIVE_EXAMPLES.play, competitions: ARCHIVE_EXAMPLES.competition });
    const reports = doc.paths['/v1/reports'].post.requestBody.content['application/json'].examples;
    expect(Object.keys(reports)).toEqual(['one', 'batch']);
    expect(reports.batch.value.reports).toEqual([reports.one.value]);
  });

  it('types the export’s NDJSON line per entity: Event, Play or Competition', () => {
    const media = doc.paths['/v1/export'].get.responses['200'].content['application/x-ndjson'];
    expect(media.schema).toEqual({ $ref: '#/components/schemas/ExportLine' });
    const line = doc.components.schemas.ExportLine;
    expect(line.anyOf).toEqual(['Event', 'Play', 'Competition'].map((n) => ({ $ref: `#/components/schemas/${n}` })));
    expect(line.description).toMatch(/entity=plays/);
    expect(JSON.stringify(doc.paths['/v1/export'])).not.toMatch(/"schema":\{"description":[^}]*\}/);
  });

  it('puts the webhook bodies, the test event included, under webhooks', () => {
    expect(doc.webhooks.event.post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WireEvent' });
    expect(doc.webhooks.test.post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WebhookTestEvent' });
    expect(doc.components.schemas.WebhookTestEvent.properties.type).toMatchObject({ const: 'test' });
    expect(doc.webhooks.event.post.parameters.map((p: Json) => p.name)).toContain('X-SVC-Signature');
  });

  it('takes its examples from the real archive', async () => {
    const key = await t.key();
    const get = async (url: string) => {
      const res = await t.app.inject({ method: 'GET', url, headers: auth(key) });
      expect(res.statusCode, url).toBe(200);
      return res.json().data;
    };
    const ex = ARCHIVE_EXAMPLES;
    expect(await get(`/v1/teams/${ex.team.id}`)).toEqual(ex.team);
    expect(await get(`/v1/players/${ex.player.id}`)).toEqual(ex.player);
    expect(await get(`/v1/venues/${ex.venue.id}`)).toEqual(ex.venue);
    expect(await get(`/v1/competitions/${ex.competition.id}`)).toEqual(ex.competition);
    expect(await get(`/v1/games/${ex.game.id}`)).toEqual(ex.game);
    expect((await get(`/v1/seasons?league=${ex.season.league}`)).find((s: Json) => s.id === ex.season.id)).toEqual(ex.season);
    expect((await get(`/v1/teams/${ex.team.id}/roster?season=${ex.rosterEntry.season}&limit=1000`)).find((r: Json) => r.player_id === ex.rosterEntry.player_id)).toEqual(ex.rosterEntry);
    expect((await get(`/v1/competitions/${ex.competition.id}/plays?limit=1`))[0]).toEqual(ex.play);
    expect((await get(`/v1/games/${ex.game.id}/events?limit=1`))[0]).toEqual(ex.event);
    expect(doc.components.schemas.Team.examples).toEqual([ex.team]);
    expect(doc.components.schemas.Event.examples).toEqual([ex.event]);
  });

  it('passes redocly lint with the project configuration', async () => {
    const file = path.join(tmpDir('svc-openapi-'), 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(doc));
    const run = await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format', 'json'], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? String(err) }));
    const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{')));
    const problems = (report.problems as Json[]).map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${JSON.stringify(p.location?.[0]?.pointer)}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });
});

describe('AsyncAPI', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(async () => t.close());

  it('describes the stream protocol from the schema package, publicly', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/asyncapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc.channels.stream.address).toBe('/v1/stream');
    const messages = doc.components.messages;
    expect(Object.keys(messages).sort()).toEqual(['error', 'event', 'heartbeat', 'ping', 'pong', 'status', 'subscribe', 'subscribed']);
    const plain = (s: unknown) => JSON.parse(JSON.stringify(s));
    expect(messages.event.payload.properties.id).toEqual(plain(WireScoreEvent.properties.id));
    expect(messages.status.payload.properties.type).toEqual(plain(StatusEvent.properties.type));
    expect(messages.subscribed.payload).toEqual(plain(ControlFrame.anyOf[0]));
    expect([messages.subscribe.payload, messages.ping.payload]).toEqual(plain(ClientMessage.anyOf));
    for (const op of Object.values(doc.operations) as Json[]) {
      expect(['send', 'receive']).toContain(op.action);
      for (const m of op.messages) expect(m.$ref).toMatch(/^#\/channels\/stream\/messages\//);
    }
    expect(doc.info.description).toContain('4008');
  });
});
