import { Value } from '@sinclair/typebox/value';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ControlFrame,
  ERROR_CODES,
  ERROR_TYPE_STATUS,
  ErrorBody,
  Event,
  StreamFrame,
  WebhookPayload,
  WireEvent,
  eventId,
  eventSeq,
  gameId,
  parseGameId,
  wireEvent,
  type ErrorCode,
} from '../src/index.js';

const event: Event = {
  id: 'evt_000000000042',
  type: 'score',
  tier: 'confirmed',
  game_id: 'soccer_1203',
  sport: 'soccer',
  league: 'wc',
  team: 'ARG',
  event_type: 'goal',
  points: 1,
  clock: "23'",
  ts: '2022-12-18T15:23:00.000Z',
  confidence: { agreement: 1, reporters: 3, latency_ms: 812, probability: 1 },
  provisional_id: 'evt_000000000041',
  schema: 'svc.event.v1',
};

describe('error catalogue', () => {
  it('gives every code the status of its type (protocol-level refusals: their HTTP status)', () => {
    const protocol: number[] = [408, 410, 414, 431];
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      if (spec.status !== ERROR_TYPE_STATUS[spec.type]) {
        expect(spec.type, code).toBe('invalid_request');
        expect(protocol, code).toContain(spec.status);
      }
      expect(spec.description.length, code).toBeGreaterThan(0);
    }
  });

  it('accepts a catalogued code in the error body and refuses any other', () => {
    const body = (code: string) => ({ error: { type: 'invalid_request', code, message: 'm', request_id: 'req_1' } });
    const known: ErrorCode = 'invalid_cursor';
    expect(Value.Check(ErrorBody, body(known))).toBe(true);
    expect(Value.Check(ErrorBody, body('something_new'))).toBe(false);
  });
});

describe('events', () => {
  it('wireEvent answers a WireEvent, links included, keys in wire order', () => {
    const wire = wireEvent(event);
    expect(Value.Check(WireEvent, wire)).toBe(true);
    expect(Value.Check(StreamFrame, wire)).toBe(true);
    expect(Value.Check(WebhookPayload, wire)).toBe(true);
    expect(Object.keys(wire)).toEqual(['id', 'type', 'tier', 'game_id', 'team', 'points', 'ts', 'confidence', 'provisional_id', 'schema']);
    // The full record is not a wire event: sport, league, event_type and clock stay off the wire.
    expect(Value.Check(WireEvent, event)).toBe(false);
  });

  it('takes the test kind as a webhook body but not as a scoring event', () => {
    const test = { id: 'evt_test_abc', type: 'test', ts: '2024-01-01T00:00:00.000Z', schema: 'svc.event.v1' };
    expect(Value.Check(WebhookPayload, test)).toBe(true);
    expect(Value.Check(WireEvent, test)).toBe(false);
  });
});

describe('stream control frames', () => {
  it('describes what the server sends', () => {
    expect(Value.Check(ControlFrame, { type: 'subscribed', recovered: true, sports: ['soccer'], leagues: [], games: [], tier: null, min_probability: 0 })).toBe(true);
    expect(Value.Check(ControlFrame, { type: 'heartbeat' })).toBe(true);
    expect(Value.Check(ControlFrame, { type: 'pong' })).toBe(true);
    expect(Value.Check(ControlFrame, { type: 'error', code: 'unknown_op', message: 'm' })).toBe(true);
    expect(Value.Check(ControlFrame, { type: 'error', code: 'sport_not_in_scope', message: 'm', param: 'sport' })).toBe(true);
    expect(Value.Check(ControlFrame, { type: 'error', code: 'made_up', message: 'm' })).toBe(false);
    expect(Value.Check(ControlFrame, { type: 'subscribed', sports: [], leagues: [], games: [], tier: null })).toBe(false);
  });
});

describe('ids', () => {
  it('round-trips game ids and event ids', () => {
    fc.assert(
      fc.property(fc.constantFrom('soccer', 'basketball', 'tennis'), fc.integer({ min: 0, max: 999_999_999_999 }), (sport, n) => {
        expect(parseGameId(gameId({ sport, n }))).toEqual({ sport, n });
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999_999_999_999 }), (seq) => {
        expect(eventSeq(eventId(seq))).toBe(seq);
      }),
    );
  });

  it('refuses what is not an id', () => {
    for (const bad of ['soccer', 'soccer_', 'Soccer_1', 'soccer_wc_1203', 'soccer_1_', 'soccer_1234567890123']) expect(parseGameId(bad), bad).toBeUndefined();
    for (const bad of ['evt_', 'evt_x1', 'evt_1234567890123456', 'dlv_1']) expect(eventSeq(bad), bad).toBeUndefined();
  });
});
