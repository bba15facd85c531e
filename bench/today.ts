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

/** Reporter keys per svc process: consensus lets one key start at most 16 open candidates per bucket. */
export const REPORT_KEYS = 16;
const MAX_OPEN_STARTED_PER_REPORTER = 16;

export interface PlannedReport {
  key: string;
  body: string;
}

/**
 * Every report opens a new candidate: buckets round-robin; within a bucket, observed times 31 s
 * apart (outside each other's 30 s window) and the reporter keys in turn. Bucket b's slot s goes
 * to key (b + s) mod K, so the first K reports use every key once (a warm-up of K reports puts
 * each key in svc's auth cache) and a key reaches its 16th open candidate of a bucket only after
 * 16 K reports of that bucket.
 */
export class ReportPlan {
  private k = 0;
  private readonly base = Date.now() - 1000;
  constructor(
    private readonly buckets: Bucket[],
    private readonly keys: string[],
  ) {}
  next(): PlannedReport {
    const bucket = this.k % this.buckets.length;
    const b = this.buckets[bucket];
    const slot = Math.floor(this.k / this.buckets.length);
    this.k += 1;
    if (slot >= this.keys.length * MAX_OPEN_STARTED_PER_REPORTER) {
      throw new Error(`ReportPlan: more than ${this.keys.length * MAX_OPEN_STARTED_PER_REPORTER * this.buckets.length} reports for one svc process; add reporter keys`);
    }
    return { key: this.keys[(bucket + slot) % this.keys.length], body: JSON.stringify({ ...b, observed_at: new Date(this.base - slot * 31_000).toISOString() }) };
  }
}
