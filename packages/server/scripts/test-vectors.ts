/**
 * Writes the cross-language test vectors that both client libraries and the server's own tests
 * read, into packages/schema/test-vectors/: signed webhook samples (webhooks.json) and event
 * samples from the real archive (events.json). They are the server's output, so the server
 * writes them; the schema package only holds them. Run from the repository root:
 *
 *   node --import tsx packages/server/scripts/test-vectors.ts
 *
 * The output is deterministic (fixed secrets and timestamps, a fixed archive game), and
 * packages/server/test/test-vectors.test.ts fails when the files drift from what the server
 * produces.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { wireEvent } from '@svc/schema';
import { importArchive } from '../src/archive/index.js';
import { signPayload } from '../src/domain/webhooks/signature.js';
import { eventRecord } from '../src/store/events/rows.js';
import { openDb } from '../src/store/sql/db.js';

/** Where the vectors live: beside the wire shapes they are samples of. */
export const VECTORS_DIR = path.resolve(import.meta.dirname, '../../schema/test-vectors');

/** The 2022 World Cup final, Argentina 3–3 France: real goals, both teams scoring. */
export const SAMPLE_GAME_QUERY = { league: 'wc', date: '2022-12-18' } as const;

export async function sampleEvents() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-vectors-'));
  const db = await openDb({ dataDir: dir, databaseUrl: null });
  try {
    await importArchive(db, { today: '2026-01-01' });
    const comp = await db.kysely
      .selectFrom('competitions')
      .select(['id'])
      .where('league', '=', SAMPLE_GAME_QUERY.league)
      .where('date', '=', SAMPLE_GAME_QUERY.date)
      .executeTakeFirstOrThrow();
    const rows = await db.kysely.selectFrom('events').selectAll().where('competition_id', '=', comp.id).orderBy('seq').execute();
    return rows.map(eventRecord);
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const SECRET = 'whsec_' + Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString('base64url');
const OLD_SECRET = 'whsec_' + Buffer.from(Array.from({ length: 32 }, (_, i) => 255 - i)).toString('base64url');
const T = 1_700_000_000;

export interface WebhookVector {
  name: string;
  /** Raw body exactly as sent (UTF-8). */
  body: string;
  header: string;
  secret: string;
  /** "Now" of the verifier, unix seconds. */
  now: number;
  tolerance_s: number;
  valid: boolean;
  /** Why the server's verifier refuses it (see domain/webhooks/signature.ts); null when valid. */
  reason: string | null;
}

export function webhookVectors(body: string): WebhookVector[] {
  const sig = signPayload([SECRET], body, T);
  const v1 = sig.split(',')[1];
  const unicodeBody = body.replace('"team":"', '"team":"Ünïcødé ⚽ ');
  const base = { secret: SECRET, now: T, tolerance_s: 300 };
  return [
    { ...base, name: 'valid', body, header: sig, valid: true, reason: null },
    { ...base, name: 'valid, 300 s old (the tolerance is inclusive)', body, header: sig, now: T + 300, valid: true, reason: null },
    { ...base, name: 'valid, two v1 during a secret rotation (new secret first)', body, header: signPayload([SECRET, OLD_SECRET], body, T), valid: true, reason: null },
    { ...base, name: 'valid for the old secret during a rotation', body, header: signPayload([SECRET, OLD_SECRET], body, T), secret: OLD_SECRET, valid: true, reason: null },
    { ...base, name: 'valid, non-ASCII body signed as UTF-8 bytes', body: unicodeBody, header: signPayload([SECRET], unicodeBody, T), valid: true, reason: null },
    { ...base, name: 'tampered body', body: body.replace('"points":1', '"points":2'), header: sig, valid: false, reason: 'signature_mismatch' },
    { ...base, name: 'wrong secret', body, header: sig, secret: OLD_SECRET, valid: false, reason: 'signature_mismatch' },
    { ...base, name: 'missing v1', body, header: `t=${T}`, valid: false, reason: 'missing_signature' },
    { ...base, name: 'missing t', body, header: v1, valid: false, reason: 'missing_timestamp' },
    { ...base, name: '301 s old', body, header: sig, now: T + 301, valid: false, reason: 'timestamp_out_of_tolerance' },
    { ...base, name: '301 s in the future', body, header: sig, now: T - 301, valid: false, reason: 'timestamp_out_of_tolerance' },
    { ...base, name: 'empty header', body, header: '', valid: false, reason: 'missing_header' },
    { ...base, name: 'non-numeric t', body, header: `t=abc,${v1}`, valid: false, reason: 'malformed' },
    { ...base, name: 'two timestamps', body, header: `t=${T},t=${T + 1},${v1}`, valid: false, reason: 'malformed' },
    { ...base, name: 'truncated digest', body, header: `t=${T},${v1.slice(0, -2)}`, valid: false, reason: 'signature_mismatch' },
  ];
}

export async function buildVectors() {
  const rest = await sampleEvents();
  if (rest.length < 2) throw new Error('sample game has too few events');
  const wire = rest.map((e) => wireEvent(e));
  const body = JSON.stringify(wire[0]);
  return {
    events: {
      description:
        'Events of one real archive game (2022 World Cup final). `rest` is the REST/export form (every field of svc.event.v1); `wire` is the stream frame and webhook body form of the same events, in the same order.',
      rest,
      wire,
    },
    webhooks: {
      description:
        'Signed webhook samples: header X-SVC-Signature as the server makes it (t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">). Verify `body` with `header`, `secret`, `tolerance_s` at time `now`; `valid` is the expected outcome.',
      vectors: webhookVectors(body),
    },
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const v = await buildVectors();
  fs.writeFileSync(path.join(VECTORS_DIR, 'events.json'), JSON.stringify(v.events, null, 2) + '\n');
  fs.writeFileSync(path.join(VECTORS_DIR, 'webhooks.json'), JSON.stringify(v.webhooks, null, 2) + '\n');
  console.log(`wrote ${v.events.rest.length} events and ${v.webhooks.vectors.length} webhook vectors to ${VECTORS_DIR}`);
}
