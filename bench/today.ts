// Today's games that take crowd reports, as (game, team, points) buckets: for bench/stream and bench/consensus.
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
