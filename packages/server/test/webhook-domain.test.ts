import http from 'node:http';
import { isIP } from 'node:net';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/domain/clock.js';
import {
  DEFAULT_DISABLE_AFTER_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_RETRY_DELAYS_S,
  deliveryDecision,
  nextAttemptDelayS,
  shouldAutoDisable,
} from '../src/domain/webhooks/schedule.js';
import {
  WebhookVerificationError,
  computeSignature,
  generateSecret,
  signPayload,
  verifyOrThrow,
  verifySignature,
} from '../src/domain/webhooks/signature.js';
import { ipFamily, isForbiddenAddress, validateWebhookUrl } from '../src/domain/webhooks/target.js';
import { pinnedLookup, resolveSafeTarget, type Lookup } from '../src/webhooks/target-resolver.js';

const SECRET = 'whsec_test';
const BODY = '{"type":"score","points":3}';
const T = 1_750_000_000;
// Computed independently (Python hmac) so the test pins the `<t>.<raw body>` construction itself.
const BODY_DIGEST = '2a8ce70b34eed348e38ecde080a564e3198bddc61176cd05d1c8f160203bc8d7';

describe('webhook signature', () => {
  it('signs `<t>.<raw body>` with HMAC-SHA256 as lowercase hex', () => {
    expect(computeSignature(SECRET, BODY, T)).toBe(BODY_DIGEST);
    expect(signPayload([SECRET], BODY, T)).toBe(`t=${T},v1=${BODY_DIGEST}`);
  });

  it('accepts a valid header', () => {
    const header = signPayload([SECRET], BODY, T);
    expect(verifySignature(header, BODY, SECRET, { now: T })).toEqual({ ok: true, t: T });
    expect(verifyOrThrow(header, BODY, SECRET, { now: T + 10 })).toBe(T);
  });

  it('uses the system clock when no time is given', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(verifySignature(signPayload([SECRET], BODY, now), BODY, SECRET).ok).toBe(true);
    expect(verifySignature(signPayload([SECRET], BODY, now - 3600), BODY, SECRET)).toEqual({
      ok: false,
      reason: 'timestamp_out_of_tolerance',
    });
  });

  it('rejects a missing header', () => {
    expect(verifySignature(undefined, BODY, SECRET, { now: T })).toEqual({ ok: false, reason: 'missing_header' });
    expect(verifySignature('', BODY, SECRET, { now: T })).toEqual({ ok: false, reason: 'missing_header' });
    expect(verifySignature('   ', BODY, SECRET, { now: T })).toEqual({ ok: false, reason: 'missing_header' });
  });

  it('rejects a header without t', () => {
    expect(verifySignature(`v1=${BODY_DIGEST}`, BODY, SECRET, { now: T })).toEqual({
      ok: false,
      reason: 'missing_timestamp',
    });
  });

  it('rejects a header without v1', () => {
    expect(verifySignature(`t=${T}`, BODY, SECRET, { now: T })).toEqual({ ok: false, reason: 'missing_signature' });
    // A different scheme alone is not a v1.
    expect(verifySignature(`t=${T},v0=${BODY_DIGEST}`, BODY, SECRET, { now: T })).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
  });

  it('rejects a wrong digest', () => {
    const wrong = computeSignature('whsec_other', BODY, T);
    expect(verifySignature(`t=${T},v1=${wrong}`, BODY, SECRET, { now: T })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    // Same secret, tampered body.
    expect(verifySignature(signPayload([SECRET], BODY, T), BODY.replace('3', '4'), SECRET, { now: T })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    // The signature binds t: the same digest under another t does not verify.
    expect(verifySignature(`t=${T + 1},v1=${BODY_DIGEST}`, BODY, SECRET, { now: T })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('rejects digests of a different length without throwing', () => {
    for (const v1 of [BODY_DIGEST.slice(0, 63), BODY_DIGEST.slice(0, 32), `${BODY_DIGEST}00`, '', 'ab', `${BODY_DIGEST}${BODY_DIGEST}`]) {
      expect(() => verifySignature(`t=${T},v1=${v1}`, BODY, SECRET, { now: T })).not.toThrow();
      expect(verifySignature(`t=${T},v1=${v1}`, BODY, SECRET, { now: T })).toEqual({
        ok: false,
        reason: 'signature_mismatch',
      });
    }
    // Same length but not hex (the hex decoder would have silently truncated this).
    const notHex = `${BODY_DIGEST.slice(0, 62)}zz`;
    expect(verifySignature(`t=${T},v1=${notHex}`, BODY, SECRET, { now: T }).ok).toBe(false);
    // Same number of UTF-16 units, different byte length: must not reach timingSafeEqual unequal.
    const multibyte = `${BODY_DIGEST.slice(0, 63)}é`;
    expect(verifySignature(`t=${T},v1=${multibyte}`, BODY, SECRET, { now: T }).ok).toBe(false);
  });

  it('rejects a timestamp 301 s old or 301 s in the future, accepts exactly 300 s', () => {
    const header = signPayload([SECRET], BODY, T);
    expect(verifySignature(header, BODY, SECRET, { now: T + 301 })).toEqual({
      ok: false,
      reason: 'timestamp_out_of_tolerance',
    });
    expect(verifySignature(header, BODY, SECRET, { now: T - 301 })).toEqual({
      ok: false,
      reason: 'timestamp_out_of_tolerance',
    });
    expect(verifySignature(header, BODY, SECRET, { now: T + 300 })).toEqual({ ok: true, t: T });
    expect(verifySignature(header, BODY, SECRET, { now: T - 300 })).toEqual({ ok: true, t: T });
    // A custom tolerance is honoured.
    expect(verifySignature(header, BODY, SECRET, { now: T + 11, toleranceS: 10 }).ok).toBe(false);
    expect(verifySignature(header, BODY, SECRET, { now: T + 10, toleranceS: 10 }).ok).toBe(true);
  });

  it('checks the timestamp before the digest, so a stale replay is reported as such', () => {
    const header = signPayload([SECRET], BODY, T);
    expect(() => verifyOrThrow(header, BODY, SECRET, { now: T + 1000 })).toThrow(WebhookVerificationError);
    try {
      verifyOrThrow(header, BODY, SECRET, { now: T + 1000 });
    } catch (err) {
      expect(err).toBeInstanceOf(WebhookVerificationError);
      expect(err instanceof WebhookVerificationError && err.reason).toBe('timestamp_out_of_tolerance');
    }
  });

  it('supports rotation: two v1 values, and each secret verifies on its own', () => {
    const oldSecret = 'whsec_old';
    const newSecret = generateSecret();
    const header = signPayload([newSecret, oldSecret], BODY, T);
    const parts = header.split(',');
    expect(parts).toHaveLength(3);
    expect(parts.filter((p) => p.startsWith('v1='))).toHaveLength(2);
    expect(verifySignature(header, BODY, newSecret, { now: T })).toEqual({ ok: true, t: T });
    expect(verifySignature(header, BODY, oldSecret, { now: T })).toEqual({ ok: true, t: T });
    expect(verifySignature(header, BODY, 'whsec_neither', { now: T })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    // Order does not matter to the receiver.
    expect(verifySignature(signPayload([oldSecret, newSecret], BODY, T), BODY, newSecret, { now: T }).ok).toBe(true);
  });

  it('treats a Buffer body and its string identically, byte for byte', () => {
    const text = '{"team":"Ñandú ⚽"}';
    const expected = 'b103faa220d9fa2ed7c21291804e07ef629efcf7e5fb81f3735473023895d4b2';
    expect(computeSignature(SECRET, text, T)).toBe(expected);
    expect(computeSignature(SECRET, Buffer.from(text, 'utf8'), T)).toBe(expected);
    expect(signPayload([SECRET], Buffer.from(text), T)).toBe(signPayload([SECRET], text, T));
    const header = signPayload([SECRET], text, T);
    expect(verifySignature(header, Buffer.from(text), SECRET, { now: T }).ok).toBe(true);
    // Re-serialised JSON is a different raw body: receivers must verify the raw bytes.
    expect(verifySignature(header, JSON.stringify(JSON.parse(text), null, 1), SECRET, { now: T }).ok).toBe(false);
  });

  it('tolerates whitespace and unknown keys, refuses malformed or ambiguous headers', () => {
    expect(verifySignature(` t=${T} , v1=${BODY_DIGEST} , v2=abc`, BODY, SECRET, { now: T }).ok).toBe(true);
    expect(verifySignature(`t=${T},v1=${BODY_DIGEST.toUpperCase()}`, BODY, SECRET, { now: T }).ok).toBe(true);
    const malformed = [
      'garbage',
      `t=${T};v1=${BODY_DIGEST}`,
      `t=abc,v1=${BODY_DIGEST}`,
      `t=,v1=${BODY_DIGEST}`,
      `t=-1,v1=${BODY_DIGEST}`,
      `t=1e9,v1=${BODY_DIGEST}`,
      `t=0x10,v1=${BODY_DIGEST}`,
      `t=${T}.5,v1=${BODY_DIGEST}`,
      `=${T},v1=${BODY_DIGEST}`,
      `t=${T},t=${T},v1=${BODY_DIGEST}`,
      `t=${T},v1=${BODY_DIGEST},${'x'.repeat(5000)}`,
    ];
    for (const header of malformed) {
      expect(verifySignature(header, BODY, SECRET, { now: T }), header).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('never throws and never accepts a random header (fuzz)', () => {
    const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
    const part = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.constantFrom('t', 'v1', '=', ',', ' ', `t=${T}`, 'v1=', 't='),
      fc.integer().map((n) => `t=${n}`),
      fc.integer({ min: T - 400, max: T + 400 }).map((n) => `t=${n}`),
      hex64.map((h) => `v1=${h}`),
      fc.string({ maxLength: 70 }).map((s) => `v1=${s}`),
    );
    const header = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.array(part, { maxLength: 6 }).map((parts) => parts.join(',')),
    );
    fc.assert(
      fc.property(header, fc.oneof(fc.string(), fc.uint8Array().map((a) => Buffer.from(a))), (h, body) => {
        let result: ReturnType<typeof verifySignature> | undefined;
        expect(() => {
          result = verifySignature(h, body, SECRET, { now: T });
        }).not.toThrow();
        expect(result?.ok).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('generates whsec_ secrets with 32 random bytes', () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice('whsec_'.length), 'base64url')).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it('refuses to sign with no secret or a non-integer timestamp', () => {
    expect(() => signPayload([], BODY, T)).toThrow(RangeError);
    expect(() => signPayload([SECRET], BODY, 1.5)).toThrow(RangeError);
    expect(() => signPayload([SECRET], BODY, -1)).toThrow(RangeError);
  });
});

describe('webhook retry schedule', () => {
  const delays = [...DEFAULT_RETRY_DELAYS_S];

  it('follows the spec table for attempts 1..15 with the default delays', () => {
    // Attempt n waits nextAttemptDelayS(n − 1): immediate, 1 min, 5 min, 30 min, then 2 h.
    const table = Array.from({ length: 15 }, (_, i) => nextAttemptDelayS(i, delays));
    expect(table).toEqual([0, 60, 300, 1800, 7200, 7200, 7200, 7200, 7200, 7200, 7200, 7200, 7200, 7200, 7200]);
    expect(delays).toEqual([0, 60, 300, 1800, 7200]);
    expect(nextAttemptDelayS(1000, delays)).toBe(7200);
  });

  it('works with a configured list and refuses nonsense', () => {
    expect([0, 1, 2, 3].map((n) => nextAttemptDelayS(n, [0, 1]))).toEqual([0, 1, 1, 1]);
    expect(() => nextAttemptDelayS(0, [])).toThrow(RangeError);
    expect(() => nextAttemptDelayS(-1, delays)).toThrow(RangeError);
    expect(() => nextAttemptDelayS(1.5, delays)).toThrow(RangeError);
  });

  it('decides 2xx → delivered, 410 → gone, 3xx/4xx/5xx/timeout → retry', () => {
    const clock = new ManualClock();
    const base = { attemptsMade: 1, maxAttempts: DEFAULT_MAX_ATTEMPTS, delaysS: delays, now: clock.now() };
    for (const status of [200, 201, 202, 204, 299]) {
      expect(deliveryDecision({ ...base, status })).toEqual({ outcome: 'delivered' });
    }
    expect(deliveryDecision({ ...base, status: 410 })).toEqual({ outcome: 'gone' });
    const retry = { outcome: 'retry', nextAttemptAt: clock.now() + 60_000 };
    for (const status of [100, 199, 300, 301, 302, 303, 304, 307, 308, 400, 401, 404, 409, 429, 500, 502, 503, 504]) {
      expect(deliveryDecision({ ...base, status }), String(status)).toEqual(retry);
    }
    expect(deliveryDecision({ ...base, error: 'timeout after 5000 ms' })).toEqual(retry);
    expect(deliveryDecision({ ...base, error: 'ECONNREFUSED' })).toEqual(retry);
    expect(deliveryDecision({ ...base })).toEqual(retry);
    // The receiver acknowledged; a later body-read error does not undo that.
    expect(deliveryDecision({ ...base, status: 200, error: 'aborted' })).toEqual({ outcome: 'delivered' });
  });

  it('schedules each retry from the decision time', () => {
    const clock = new ManualClock();
    const decide = (attemptsMade: number) =>
      deliveryDecision({ status: 500, attemptsMade, maxAttempts: 15, delaysS: delays, now: clock.now() });
    expect(decide(1)).toEqual({ outcome: 'retry', nextAttemptAt: clock.now() + 60_000 });
    expect(decide(2)).toEqual({ outcome: 'retry', nextAttemptAt: clock.now() + 300_000 });
    expect(decide(3)).toEqual({ outcome: 'retry', nextAttemptAt: clock.now() + 1_800_000 });
    expect(decide(4)).toEqual({ outcome: 'retry', nextAttemptAt: clock.now() + 7_200_000 });
    expect(decide(14)).toEqual({ outcome: 'retry', nextAttemptAt: clock.now() + 7_200_000 });
  });

  it('fails once attemptsMade reaches maxAttempts', () => {
    const clock = new ManualClock();
    const start = clock.now();
    let attempts = 0;
    let decision = deliveryDecision({ status: 503, attemptsMade: 0, maxAttempts: 15, delaysS: delays, now: clock.now() });
    // Walk a delivery that always fails, moving the clock to each scheduled attempt.
    while (decision.outcome === 'retry') {
      clock.set(decision.nextAttemptAt);
      attempts += 1;
      decision = deliveryDecision({ status: 503, attemptsMade: attempts, maxAttempts: 15, delaysS: delays, now: clock.now() });
    }
    expect(decision).toEqual({ outcome: 'failed' });
    expect(attempts).toBe(15);
    // Last attempt at 0+60+300+1800+7200×11 s after the first.
    expect(clock.now() - start).toBe((60 + 300 + 1800 + 7200 * 11) * 1000);

    const last = { attemptsMade: 15, maxAttempts: 15, delaysS: delays, now: clock.now() };
    expect(deliveryDecision({ ...last, status: 500 })).toEqual({ outcome: 'failed' });
    expect(deliveryDecision({ ...last, error: 'timeout' })).toEqual({ outcome: 'failed' });
    expect(deliveryDecision({ ...last, status: 302 })).toEqual({ outcome: 'failed' });
    // A 2xx or a 410 on the last attempt still counts as what it is.
    expect(deliveryDecision({ ...last, status: 200 })).toEqual({ outcome: 'delivered' });
    expect(deliveryDecision({ ...last, status: 410 })).toEqual({ outcome: 'gone' });
    expect(deliveryDecision({ ...last, attemptsMade: 14, status: 500 }).outcome).toBe('retry');
  });

  it('auto-disables after exactly 24 h of failures without a 2xx', () => {
    const clock = new ManualClock();
    const firstFailure = clock.now();
    const at = (now: number, lastSuccessAt: number | null = firstFailure - 1) =>
      shouldAutoDisable({ lastSuccessAt, firstFailureSinceSuccessAt: firstFailure, now, disableAfterMs: DEFAULT_DISABLE_AFTER_MS });
    expect(DEFAULT_DISABLE_AFTER_MS).toBe(86_400_000);
    expect(at(firstFailure)).toBe(false);
    expect(at(firstFailure + DEFAULT_DISABLE_AFTER_MS - 1)).toBe(false);
    expect(at(firstFailure + DEFAULT_DISABLE_AFTER_MS)).toBe(true);
    expect(at(firstFailure + DEFAULT_DISABLE_AFTER_MS + 1)).toBe(true);
    // Never had a 2xx at all: the failure streak alone counts.
    expect(at(firstFailure + DEFAULT_DISABLE_AFTER_MS, null)).toBe(true);
    expect(at(firstFailure + DEFAULT_DISABLE_AFTER_MS - 1, null)).toBe(false);
  });

  it('never auto-disables an endpoint without a failure streak', () => {
    const now = new ManualClock().now();
    const week = 7 * DEFAULT_DISABLE_AFTER_MS;
    // Never failed, whether or not it ever succeeded.
    expect(shouldAutoDisable({ lastSuccessAt: null, firstFailureSinceSuccessAt: null, now, disableAfterMs: DEFAULT_DISABLE_AFTER_MS })).toBe(false);
    expect(shouldAutoDisable({ lastSuccessAt: now - week, firstFailureSinceSuccessAt: null, now, disableAfterMs: DEFAULT_DISABLE_AFTER_MS })).toBe(false);
    // Quiet for a week, then one failure just now: the 24 h runs from the failure, not the success.
    expect(shouldAutoDisable({ lastSuccessAt: now - week, firstFailureSinceSuccessAt: now, now, disableAfterMs: DEFAULT_DISABLE_AFTER_MS })).toBe(false);
    // A success at or after the streak's start breaks it.
    expect(
      shouldAutoDisable({ lastSuccessAt: now - 1000, firstFailureSinceSuccessAt: now - week, now, disableAfterMs: DEFAULT_DISABLE_AFTER_MS }),
    ).toBe(false);
  });
});

describe('webhook targets (SSRF)', () => {
  it('reads IP literals exactly as node:net does (the domain may not import it)', () => {
    const literal = fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.string(), fc.constantFrom('::ffff:1.2.3.4', 'fe80::1%eth0', '1.2.3', '01.2.3.4', '::', '1::2::3', '[::1]'));
    fc.assert(
      fc.property(literal, (s) => {
        // A scoped address is never a target, so ipFamily refuses it where node:net reads it.
        const expected = s.includes('%') ? 0 : isIP(s);
        expect(ipFamily(s)).toBe(expected);
      }),
      { numRuns: 2000, seed: 42 },
    );
  });

  const forbidden = [
    // IPv4, first/last of each range plus a well-known member
    '127.0.0.1', '127.255.255.255', '0.0.0.0', '0.255.255.255',
    '10.0.0.0', '10.255.255.255', '172.16.0.0', '172.31.255.255', '192.168.0.1', '192.168.255.255',
    '169.254.0.1', '169.254.169.254', '100.64.0.0', '100.127.255.255',
    '192.0.0.1', '192.0.0.255', '192.0.2.1', '198.18.0.0', '198.19.255.255', '198.51.100.7', '203.0.113.9',
    '224.0.0.1', '239.255.255.255', '240.0.0.1', '254.255.255.255', '255.255.255.255',
    // IPv6
    '::1', '::', '0:0:0:0:0:0:0:1', '[::1]',
    'fc00::1', 'fd12:3456:789a::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    'fe80::1', 'FE80::1', 'febf:ffff::1', 'fe80::1%eth0', 'fec0::1',
    'ff00::1', 'ff02::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:192.168.1.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe',
    '64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b::10.1.2.3', '64:ff9b:1::8.8.8.8',
    '2001:db8::1', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff',
    '2002:7f00:1::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '::127.0.0.1', '100::1',
    // not an address at all: fail closed
    'example.com', '', '1.2.3', '1.2.3.4.5', '::ffff:1.2.3.256', 'localhost',
  ];
  const allowed = [
    '93.184.216.34', '8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0',
    '198.17.255.255', '198.20.0.0', '192.0.1.1', '192.0.3.1', '223.255.255.255', '11.0.0.1', '126.255.255.255', '128.0.0.1',
    '2606:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001::1', '::ffff:93.184.216.34', '64:ff9b::93.184.216.34',
    '2002:5db8:d822::1', '2001:db9::1', 'fbff::1', 'fe7f::1',
  ];

  it.each(forbidden)('refuses %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each(allowed)('allows %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
  });

  // Every IPv6 spelling that reaches an IPv4 host: mapped, translated (SIIT), compatible, NAT64, 6to4.
  const v4Octets = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
  const hex16 = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
  const wrappers = ([a, b, c, d]: [number, number, number, number]) => {
    const dotted = `${a}.${b}.${c}.${d}`;
    const tail = `${hex16(a, b)}:${hex16(c, d)}`;
    return {
      mapped: [`::ffff:${dotted}`, `::ffff:${tail}`, `0:0:0:0:0:ffff:${tail}`],
      translated: [`::ffff:0:${dotted}`, `::ffff:0:${tail}`, `0:0:0:0:ffff:0:${tail}`],
      compatible: [`::${dotted}`, `::${tail}`],
      nat64: [`64:ff9b::${dotted}`, `64:ff9b::${tail}`],
      sixToFour: [`2002:${tail}::1`, `2002:${tail}:ffff::`],
    };
  };

  it('refuses the IPv4-translated forms of refused addresses (::ffff:0:a.b.c.d)', () => {
    for (const ip of ['::ffff:0:7f00:1', '::ffff:0:127.0.0.1', '::ffff:0:a00:1', '::ffff:0:a9fe:a9fe', '::ffff:0:c0a8:101', '[::ffff:0:7f00:1]']) {
      expect(isForbiddenAddress(ip), ip).toBe(true);
    }
  });

  it('refuses every IPv6 wrapper of a refused IPv4 address, and allows the routable wrappers of a public one', () => {
    fc.assert(
      fc.property(v4Octets, (octets) => {
        const forms = wrappers(octets);
        const v4 = octets.join('.');
        // IPv4-compatible addresses are deprecated: nothing public uses them, so they are always refused.
        for (const ip of forms.compatible) expect(isForbiddenAddress(ip), ip).toBe(true);
        const refused = isForbiddenAddress(v4);
        for (const ip of [...forms.mapped, ...forms.translated, ...forms.nat64, ...forms.sixToFour]) {
          expect(isForbiddenAddress(ip), `${ip} wraps ${v4}`).toBe(refused);
        }
      }),
      { numRuns: 2000 },
    );
    // The refused ranges are rare among random addresses: check their wrappers on purpose too.
    const refusedV4 = fc.oneof(
      fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(0), fc.nat(255), fc.nat(255), fc.nat(255)),
    );
    fc.assert(
      fc.property(refusedV4, (octets) => {
        const forms = wrappers(octets);
        for (const ip of Object.values(forms).flat()) expect(isForbiddenAddress(ip), ip).toBe(true);
        for (const ip of [...forms.mapped, ...forms.translated, ...forms.nat64]) {
          expect(validateWebhookUrl(`https://[${ip}]/hook`, { allowPrivate: false }), ip).toMatchObject({ ok: false, code: 'forbidden_address' });
        }
      }),
      { numRuns: 500 },
    );
  });

  it('refuses ports outside 1-65535 and allows any other port', () => {
    for (const raw of ['https://example.com:0/hook', 'https://93.184.216.34:0/', 'https://example.com:65536/hook', 'https://example.com:99999/', 'https://example.com:-1/']) {
      expect(validateWebhookUrl(raw, { allowPrivate: false }), raw).toMatchObject({ ok: false });
      expect(validateWebhookUrl(raw, { allowPrivate: true }), raw).toMatchObject({ ok: false });
    }
    expect(validateWebhookUrl('https://example.com:0/hook', { allowPrivate: false })).toMatchObject({ ok: false, code: 'invalid_port' });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 65535 }), (port) => {
        expect(validateWebhookUrl(`https://example.com:${port}/hook`, { allowPrivate: false }), String(port)).toMatchObject({ ok: true });
      }),
    );
  });

  it('accepts public https URLs', () => {
    for (const raw of ['https://example.com/hook', 'https://93.184.216.34/x', 'https://[2606:4700::1111]:8443/x?y=1']) {
      const r = validateWebhookUrl(raw, { allowPrivate: false });
      expect(r.ok, raw).toBe(true);
      if (r.ok) expect(r.url.href).toBe(new URL(raw).href);
    }
  });

  it('refuses http unless private targets are allowed', () => {
    expect(validateWebhookUrl('http://example.com/hook', { allowPrivate: false })).toMatchObject({ ok: false });
    expect(validateWebhookUrl('http://example.com/hook', { allowPrivate: true })).toMatchObject({ ok: true });
  });

  it('refuses other schemes, relative URLs and credentials', () => {
    for (const allowPrivate of [false, true]) {
      for (const raw of [
        'ftp://example.com/hook',
        'file:///etc/passwd',
        'javascript:alert(1)',
        'data:text/plain,hi',
        'ws://example.com/',
        '/hook',
        'hook',
        'example.com/hook',
        '//example.com/hook',
        '',
        'https://user:pass@example.com/hook',
        'https://user@example.com/hook',
        'https://:pass@example.com/hook',
        `https://example.com/${'a'.repeat(3000)}`,
      ]) {
        expect(validateWebhookUrl(raw, { allowPrivate }), raw).toMatchObject({ ok: false });
      }
    }
  });

  it('refuses IP-literal and loopback-name hosts at once, in every spelling the URL parser accepts', () => {
    const raws = [
      'https://127.0.0.1/hook',
      'https://127.0.0.1:8443/hook',
      'https://[::1]/hook',
      'https://169.254.169.254/latest/meta-data/',
      'https://2130706433/', // 127.0.0.1 as one number
      'https://0x7f.1/', // 127.0.0.1 in hex shorthand
      'https://0177.0.0.1/', // octal
      'https://[::ffff:127.0.0.1]/',
      'https://[64:ff9b::a9fe:a9fe]/',
      'https://10.0.0.1/',
      'https://[fd00::1]/',
      'https://0.0.0.0/',
      'https://localhost/',
      'https://LOCALHOST./',
      'https://api.localhost/',
    ];
    for (const raw of raws) {
      expect(validateWebhookUrl(raw, { allowPrivate: false }), raw).toMatchObject({ ok: false });
      expect(validateWebhookUrl(raw, { allowPrivate: true }), raw).toMatchObject({ ok: true });
    }
  });

  const lookupOf =
    (...addresses: string[]): Lookup =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('resolves at delivery time and returns the address to pin', async () => {
    const hosts: string[] = [];
    const lookup: Lookup = async (host) => {
      hosts.push(host);
      return [{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1::1', family: 6 }];
    };
    const r = await resolveSafeTarget(new URL('https://example.com/hook'), { allowPrivate: false, lookup });
    expect(r).toEqual({ ok: true, address: '93.184.216.34', family: 4 });
    expect(hosts).toEqual(['example.com']);
  });

  it('refuses a name that resolves to a private address (DNS rebinding)', async () => {
    const url = new URL('https://rebind.example/hook');
    // The name looked public at registration; now it answers with internal addresses.
    for (const address of ['127.0.0.1', '169.254.169.254', '10.0.0.5', '::1', '::ffff:127.0.0.1', 'fd00::2']) {
      const r = await resolveSafeTarget(url, { allowPrivate: false, lookup: lookupOf(address) });
      expect(r, address).toMatchObject({ ok: false });
      if (!r.ok) expect(r.reason).toContain(address);
    }
    // The check runs again at every delivery: public first, private the next time.
    let calls = 0;
    const flipping: Lookup = async () => [{ address: calls++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    expect(await resolveSafeTarget(url, { allowPrivate: false, lookup: flipping })).toEqual({
      ok: true,
      address: '93.184.216.34',
      family: 4,
    });
    expect(await resolveSafeTarget(url, { allowPrivate: false, lookup: flipping })).toMatchObject({ ok: false });
  });

  it('refuses a mix of public and private addresses, in either order', async () => {
    const url = new URL('https://mixed.example/hook');
    expect(await resolveSafeTarget(url, { allowPrivate: false, lookup: lookupOf('93.184.216.34', '10.0.0.1') })).toMatchObject({ ok: false });
    expect(await resolveSafeTarget(url, { allowPrivate: false, lookup: lookupOf('192.168.1.1', '93.184.216.34') })).toMatchObject({ ok: false });
    expect(await resolveSafeTarget(url, { allowPrivate: false, lookup: lookupOf('2606:4700::1111', 'fe80::1') })).toMatchObject({ ok: false });
  });

  it('allows private addresses when configured, and still refuses garbage from the resolver', async () => {
    const url = new URL('http://receiver.internal:9000/hook');
    expect(await resolveSafeTarget(url, { allowPrivate: true, lookup: lookupOf('10.0.0.1') })).toEqual({
      ok: true,
      address: '10.0.0.1',
      family: 4,
    });
    expect(await resolveSafeTarget(url, { allowPrivate: true, lookup: lookupOf('not-an-ip') })).toMatchObject({ ok: false });
  });

  it('reports lookup failures and empty answers as refusals', async () => {
    const url = new URL('https://nowhere.example/hook');
    const failing: Lookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });
    };
    const r = await resolveSafeTarget(url, { allowPrivate: false, lookup: failing });
    expect(r).toMatchObject({ ok: false });
    if (!r.ok) expect(r.reason).toContain('ENOTFOUND');
    expect(await resolveSafeTarget(url, { allowPrivate: false, lookup: lookupOf() })).toMatchObject({ ok: false });
  });

  it('checks IP literals without DNS, and re-validates the URL', async () => {
    const never: Lookup = async () => {
      throw new Error('lookup must not be called');
    };
    expect(await resolveSafeTarget(new URL('https://93.184.216.34/'), { allowPrivate: false, lookup: never })).toEqual({
      ok: true,
      address: '93.184.216.34',
      family: 4,
    });
    expect(await resolveSafeTarget(new URL('https://[2606:4700::1111]/'), { allowPrivate: false, lookup: never })).toEqual({
      ok: true,
      address: '2606:4700::1111',
      family: 6,
    });
    expect(await resolveSafeTarget(new URL('https://127.0.0.1/'), { allowPrivate: false, lookup: never })).toMatchObject({ ok: false });
    // Registered while private targets were allowed; the setting has since been turned off.
    expect(await resolveSafeTarget(new URL('http://example.com/'), { allowPrivate: false, lookup: lookupOf('93.184.216.34') })).toMatchObject({
      ok: false,
    });
  });

  it('pinnedLookup answers both lookup shapes with the checked address', () => {
    const lookup = pinnedLookup('93.184.216.34', 4);
    const seen: unknown[] = [];
    lookup('example.com', {}, (err, address, family) => seen.push([err, address, family]));
    lookup('example.com', { all: true }, (err, address) => seen.push([err, address]));
    expect(seen).toEqual([
      [null, '93.184.216.34', 4],
      [null, [{ address: '93.184.216.34', family: 4 }]],
    ]);
  });

  it('pinnedLookup makes undici connect to the pinned address whatever the hostname', async () => {
    const server = http.createServer((req, res) => res.end(`host=${req.headers.host}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('server did not bind a TCP port');
    const { port } = address;
    const agent = new Agent({ connect: { lookup: pinnedLookup('127.0.0.1', 4) } });
    try {
      // This name does not exist; only the pinned lookup can make the request succeed.
      const res = await request(`http://pinned.invalid:${port}/hook`, { method: 'POST', body: '{}', dispatcher: agent });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe(`host=pinned.invalid:${port}`);
    } finally {
      await agent.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
