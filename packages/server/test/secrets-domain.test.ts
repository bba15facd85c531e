import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateSecretKey, openSealed, parseSecretKey, seal, SecretBox, SecretKey, SealedSecretError, sealedKeyId, SEALED_PREFIX } from '../src/domain/secrets/sealed.js';
import { loadConfig } from '../src/config.js';

const keyA = new SecretKey(Buffer.alloc(32, 1));
const keyB = new SecretKey(Buffer.alloc(32, 2));

describe('sealed secrets (AES-256-GCM)', () => {
  it('opens what it sealed, for any text and any row binding, and names the key', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.string({ maxLength: 80 }), (plaintext, aad) => {
        const sealed = seal(keyA, plaintext, aad);
        expect(sealed.startsWith(SEALED_PREFIX)).toBe(true);
        expect(sealedKeyId(sealed)).toBe(keyA.id);
        expect(openSealed([keyB, keyA], sealed, aad)).toEqual({ ok: true, plaintext, keyId: keyA.id });
      }),
    );
  });

  it('never shows the plaintext, and seals the same text differently each time', () => {
    const secret = 'whsec_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG';
    const a = seal(keyA, secret, 'row');
    const b = seal(keyA, secret, 'row');
    expect(a).not.toBe(b);
    for (const s of [a, b]) {
      expect(s).not.toContain('whsec_');
      expect(s).not.toContain(secret.slice(6, 20));
      expect(s).not.toContain(Buffer.from(secret).toString('base64').slice(4, 20));
    }
  });

  it('detects any altered character, another row binding and another key', () => {
    const sealed = seal(keyA, 'whsec_the-secret', 'webhook_endpoints:we_1');
    fc.assert(
      fc.property(fc.nat(sealed.length - 1), fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.'), (i, c) => {
        fc.pre(sealed[i] !== c);
        const altered = sealed.slice(0, i) + c + sealed.slice(i + 1);
        const r = openSealed([keyA], altered, 'webhook_endpoints:we_1');
        expect(r.ok).toBe(false);
      }),
    );
    // Every position, exhaustively: the spare bits of each part's last character included.
    for (let i = 0; i < sealed.length; i++) {
      for (const c of ['A', 'B', 'Q', 'w', '0', '_']) {
        if (sealed[i] === c) continue;
        expect(openSealed([keyA], sealed.slice(0, i) + c + sealed.slice(i + 1), 'webhook_endpoints:we_1').ok).toBe(false);
      }
    }
    expect(openSealed([keyA], sealed, 'webhook_endpoints:we_2')).toEqual({ ok: false, reason: 'tampered' });
    expect(openSealed([keyB], sealed, 'webhook_endpoints:we_1')).toEqual({ ok: false, reason: 'unknown_key' });
    // A value claiming keyB's id but sealed with keyA's bytes fails its tag.
    const relabelled = sealed.replace(keyA.id, keyB.id);
    expect(openSealed([keyA, keyB], relabelled, 'webhook_endpoints:we_1')).toEqual({ ok: false, reason: 'tampered' });
    // A truncated tag (GCM would accept a shorter one) is refused.
    expect(openSealed([keyA], sealed.slice(0, -4), 'webhook_endpoints:we_1').ok).toBe(false);
  });

  it('never throws on garbage', () => {
    const part = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('svc1.', '.', keyA.id, 'AAAAAAAAAAAAAAAA', 'AAAAAAAAAAAAAAAAAAAAAA'));
    fc.assert(
      fc.property(fc.array(part, { maxLength: 8 }), (parts) => {
        const r = openSealed([keyA], parts.join(''), 'x');
        expect(r.ok).toBe(false);
      }),
    );
  });

  it('SecretBox throws a typed error that names the value, never its bytes', () => {
    const box = new SecretBox(keyB);
    const sealed = seal(keyA, 'whsec_zzz', 'r');
    expect(() => box.open(sealed, 'r', 'the secret of webhook endpoint we_1')).toThrow(SealedSecretError);
    try {
      box.open(sealed, 'r', 'the secret of webhook endpoint we_1');
    } catch (e) {
      expect(e).toMatchObject({ reason: 'unknown_key' });
      expect(String(e)).not.toContain('whsec_zzz');
    }
    expect(new SecretBox(keyB, [keyA]).open(sealed, 'r')).toBe('whsec_zzz');
    // A key in a log line shows its id only.
    expect(JSON.stringify({ key: keyA })).toBe(JSON.stringify({ key: `SecretKey(${keyA.id})` }));
  });

  it('parses 64 hex characters and nothing else', () => {
    const k = generateSecretKey();
    const parsed = parseSecretKey(k.toHex().toUpperCase());
    expect(parsed.ok && parsed.key.id).toBe(k.id);
    expect(parseSecretKey(undefined)).toEqual({ ok: false, reason: 'missing' });
    expect(parseSecretKey('ab'.repeat(31))).toEqual({ ok: false, reason: 'wrong_length' });
    expect(parseSecretKey('zz'.repeat(32))).toEqual({ ok: false, reason: 'not_hex' });
    fc.assert(
      fc.property(fc.string({ maxLength: 70 }), (s) => {
        const r = parseSecretKey(s);
        expect(r.ok).toBe(/^\s*[0-9a-fA-F]{64}\s*$/.test(s));
      }),
    );
  });

  it('config: SVC_SECRET_KEY and SVC_REDIS_PREFIX are validated with one line that never echoes the key', () => {
    const hex = generateSecretKey().toHex();
    expect(loadConfig({ SVC_SECRET_KEY: hex }).secretKey?.toHex()).toBe(hex);
    expect(loadConfig({}).secretKey).toBeNull();
    const bad = 'f00d'.repeat(15);
    expect(() => loadConfig({ SVC_SECRET_KEY: bad })).toThrow(/^SVC_SECRET_KEY must be 32 bytes written as 64 hex characters/);
    try {
      loadConfig({ SVC_SECRET_KEY: bad });
    } catch (e) {
      expect(String(e)).not.toContain(bad);
      expect(String(e)).not.toContain('\n');
    }
    expect(loadConfig({}).redisPrefix).toBe('svc:');
    expect(loadConfig({ SVC_REDIS_PREFIX: 'staging:' }).redisPrefix).toBe('staging:');
    expect(() => loadConfig({ SVC_REDIS_PREFIX: 'has space' })).toThrow(/^SVC_REDIS_PREFIX must be/);
    expect(() => loadConfig({ SVC_REDIS_PREFIX: 'x'.repeat(65) })).toThrow(/SVC_REDIS_PREFIX/);
  });
});
