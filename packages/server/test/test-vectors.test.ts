import fs from 'node:fs';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { Event } from '@svc/schema';
import { describe, expect, it } from 'vitest';
import { buildVectors, VECTORS_DIR, type WebhookVector } from '../scripts/test-vectors.js';
import { verifySignature } from '../src/domain/webhooks/signature.js';

const dir = VECTORS_DIR;
const read = (file: string): unknown => JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));


describe('cross-language test vectors (packages/schema/test-vectors)', () => {
  it('are what the server produces today (regenerate with packages/server/scripts/test-vectors.ts when this fails on purpose)', async () => {
    const fresh = await buildVectors();
    expect(read('events.json')).toEqual(JSON.parse(JSON.stringify(fresh.events)));
    expect(read('webhooks.json')).toEqual(JSON.parse(JSON.stringify(fresh.webhooks)));
  });

  it('every REST sample is a valid svc.event.v1 record', () => {
    const { rest } = read('events.json') as { rest: unknown[] };
    expect(rest.length).toBeGreaterThan(1);
    for (const e of rest) expect([...Value.Errors(Event, e)]).toEqual([]);
  });

  it("the server's verifier agrees with every webhook vector", () => {
    const { vectors } = read('webhooks.json') as { vectors: WebhookVector[] };
    expect(vectors.some((v) => v.valid)).toBe(true);
    expect(vectors.some((v) => !v.valid)).toBe(true);
    for (const v of vectors) {
      const r = verifySignature(v.header, v.body, v.secret, { now: v.now, toleranceS: v.tolerance_s });
      expect({ name: v.name, ok: r.ok, reason: r.ok ? null : r.reason }).toEqual({ name: v.name, ok: v.valid, reason: v.reason });
    }
  });
});
