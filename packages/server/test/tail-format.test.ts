import { describe, expect, it } from 'vitest';
import { formatEvent } from '../src/cli/tail.js';

/** `svc tail` lines for the two kinds of score_retracted (docs/corrections.md). */
describe('svc tail: retractions and corrections', () => {
  const base = { game_id: 'soccer_25460', team: 'BRA', points: 1, ts: '2026-06-11T18:25:10.000Z', confidence: { agreement: 1, reporters: 0, latency_ms: 0, probability: 1 }, schema: 'svc.event.v1' as const };
  it('a provisional withdrawn, and a confirmed score corrected', () => {
    expect(formatEvent({ ...base, id: 'evt_000000000012', type: 'score_retracted', tier: 'provisional', retracted_id: 'evt_000000000010' })).toBe(
      '18:25:10  soccer_25460   provisional  retracted evt_000000000010',
    );
    expect(formatEvent({ ...base, id: 'evt_000000000013', type: 'score_retracted', tier: 'confirmed', retracted_id: 'evt_000000000011' })).toBe(
      '18:25:10  soccer_25460   CONFIRMED    BRA -1 withdrawn  (corrects evt_000000000011, evt_000000000013)',
    );
  });
});
