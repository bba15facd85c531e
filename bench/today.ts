// Today's games that take crowd reports, as (game, team, points) buckets, and a plan of reports
// that each open a new candidate: for bench/stream, bench/consensus and bench/report-write.
import { BENCH_KEY } from './lib.js';

export interface Bucket {
  game_id: string;
  team: string;
  points: number;
}

/** Points one report may carry, per sport (packages/server/src/live/sport-rules.ts). */
const POINTS: Record<string, number[]> = { soccer: [1], basketball: [1, 2, 3] };

export async function todaysBuckets(base: string): Promise<Bucket[]> {
  const res = await fetch(`${base}/v1/games?date=today&limit=1000`, { headers: { authorization: `Bearer ${BENCH_KEY}` } });
  if (res.status !== 200) throw new Error(`GET /v1/games?date=today: ${res.status} ${await res.text()}`);
  const body: unknown = await res.json();
  const data = typeof body === 'object' && body !== null && 'data' in body && Array.isArray(body.data) ? body.data : [];
  const buckets: Bucket[] = [];
  for (const g of data) {
    if (typeof g !== 'object' || g === null) continue;
    const id = 'id' in g && typeof g.id === 'string' ? g.id : null;
    const sport = 'sport' in g && typeof g.sport === 'string' ? g.sport : '';
    const status = 'status' in g ? g.status : null;
    const competitors = 'competitors' in g && Array.isArray(g.competitors) ? g.competitors : [];
    if (!id || status === 'final' || !POINTS[sport]) continue;
    for (const c of competitors) {
      const entity = typeof c === 'object' && c !== null && 'entity_id' in c && typeof c.entity_id === 'string' ? c.entity_id : null;
      const team = entity?.startsWith('team:') ? entity.split(':').pop() : undefined;
      if (team) for (const points of POINTS[sport]) buckets.push({ game_id: id, team, points });
    }
  }
  if (buckets.length === 0) throw new Error('no games today that take reports (GET /v1/games?date=today)');
  return buckets;
}

/** Distinct games among the buckets. */
export const gameCount = (buckets: Bucket[]): number => new Set(buckets.map((b) => b.game_id)).size;

/** An observation of a bucket, and where it falls in the turns: `turn` counts every one, `slot` the bucket's own. */
export interface SpacedObservation {
  bucket: Bucket;
  turn: number;
  slot: number;
  body: string;
}

/**
 * Observations that never join one another's candidates: the buckets in turn, each bucket's
 * observed times 31 s apart (outside the 30 s window), counting back from a second ago.
 */
export function spacedObservations(buckets: Bucket[]): () => SpacedObservation {
  let turn = 0;
  const base = Date.now() - 1000;
  return () => {
    const bucket = buckets[turn % buckets.length];
    const slot = Math.floor(turn / buckets.length);
    turn += 1;
    return { bucket, turn: turn - 1, slot, body: JSON.stringify({ ...bucket, observed_at: new Date(base - slot * 31_000).toISOString() }) };
  };
}

/**
 * Reporter keys per svc process. Consensus lets one voice have at most 2 open candidates per game
 * that nobody else backs (docs/consensus.md "Flood"), and every report here opens one alone, so
 * a key reports at most twice per game: the keys spread the reports as a real crowd's would.
 */
export const REPORT_KEYS = 128;
const LONE_PER_GAME = 2;

export interface PlannedReport {
  key: string;
  body: string;
}

/**
 * Every report opens a new candidate: buckets round-robin; within a bucket, observed times 31 s
 * apart (outside each other's 30 s window). Report k goes to the first key from k mod K on that
 * has reported fewer than twice in its game, so the first K reports use every key once (a warm-up
 * of K reports puts each key in svc's auth cache) and no key opens a third candidate of a game.
 */
export class ReportPlan {
  private k = 0;
  private readonly base = Date.now() - 1000;
  /** game → reports each key sent there. */
  private readonly used = new Map<string, number[]>();
  constructor(
    private readonly buckets: Bucket[],
    private readonly keys: string[],
  ) {}
  next(): PlannedReport {
    const bucket = this.k % this.buckets.length;
    const b = this.buckets[bucket];
    const slot = Math.floor(this.k / this.buckets.length);
    const start = this.k % this.keys.length;
    this.k += 1;
    let counts = this.used.get(b.game_id);
    if (!counts) this.used.set(b.game_id, (counts = new Array<number>(this.keys.length).fill(0)));
    for (let i = 0; i < this.keys.length; i++) {
      const key = (start + i) % this.keys.length;
      if (counts[key] >= LONE_PER_GAME) continue;
      counts[key] += 1;
      return { key: this.keys[key], body: JSON.stringify({ ...b, observed_at: new Date(this.base - slot * 31_000).toISOString() }) };
    }
    throw new Error(`ReportPlan: more than ${this.keys.length * LONE_PER_GAME} reports for game ${b.game_id} in one svc process; add reporter keys`);
  }
}
