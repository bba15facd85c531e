import { addDays, isoDate, isoTime, type Clock } from '../domain/clock.js';
import { CompetitionRepo } from '../store/reference/competitions.js';
import type { Db } from '../store/sql/db.js';
import type { IngestClient } from './client.js';
import type { Random } from './random.js';

/**
 * The simulator's disruptions (docs/schedule.md, sim/README.md): real schedules move, so the
 * sandbox's do too. Every `everyMs` (default 10 min; the first `firstMs` after start, default
 * 5 min) one disruption, alternately:
 * - a postponement of an upcoming game (1 to 3 days ahead, not one the simulator plays), which
 *   is scheduled again `holdMs` later (default 5 min) a week after its first announced start;
 * - a suspension of a game the simulator is playing, resumed `holdMs` later (if it is still
 *   suspended: a final play may end it first).
 * So a newcomer sees both within the first 20 minutes of `npm start`. Each goes through the
 * public `POST /v1/competitions/{id}/status` with the simulator's official key.
 * `SVC_SIMULATOR_DISRUPTIONS=off` turns them off (and tests leave them off).
 */
export interface DisruptionOptions {
  client: IngestClient;
  db: Db;
  clock: Clock;
  random: Random;
  officialKey: () => string | undefined;
  /** Competition ids of the games the simulator is playing now. */
  playing: () => string[];
  log: (line: string) => void;
  everyMs?: number;
  firstMs?: number;
  holdMs?: number;
}

const REASONS = {
  postponed: ['Waterlogged pitch', 'Heavy snow', 'Stadium safety inspection', 'Travel disruption'],
  suspended: ['Heavy rain', 'Floodlight failure', 'Thunderstorm nearby', 'Medical emergency in the stands'],
} as const;

export function startDisruptions(o: DisruptionOptions): { stop(): void } {
  const everyMs = o.everyMs ?? 10 * 60_000;
  const holdMs = o.holdMs ?? 5 * 60_000;
  const competitions = new CompetitionRepo(o.db);
  const timers = new Set<NodeJS.Timeout>();
  let turn = 0;
  let stopped = false;
  const later = (ms: number, fn: () => Promise<void>) => {
    const t = setTimeout(() => {
      timers.delete(t);
      if (!stopped) void fn().catch((err: unknown) => o.log(`disruption failed: ${err instanceof Error ? err.message : String(err)}`));
    }, ms);
    t.unref();
    timers.add(t);
  };
  const pick = <T>(list: readonly T[]): T | undefined => list[Math.floor(o.random() * list.length)];

  async function move(id: string, body: { status: string; start_time?: string; reason?: string }): Promise<boolean> {
    const key = o.officialKey();
    if (!key) return false;
    const reply = await o.client.post(key, `/v1/competitions/${encodeURIComponent(id)}/status`, body);
    return reply.status === 200;
  }

  async function postpone(): Promise<boolean> {
    const today = isoDate(o.clock.now());
    for (const days of [1, 2, 3]) {
      for (const sport of ['soccer', 'basketball']) {
        const ids = await competitions.scheduledOn(sport, addDays(today, days));
        const id = pick(ids);
        if (!id) continue;
        const c = await competitions.get(id);
        if (!c) continue;
        const reason = pick(REASONS.postponed);
        if (!(await move(id, { status: 'postponed', reason }))) continue;
        o.log(`${id} postponed (${reason}); scheduled again in ${Math.round(holdMs / 60_000)} min`);
        const first = Date.parse(c.start_time ?? `${c.date}T18:00:00Z`);
        later(holdMs, async () => {
          const when = isoTime(first + 7 * 86_400_000);
          if (await move(id, { status: 'scheduled', start_time: when, reason: 'New date announced' })) o.log(`${id} rescheduled to ${when}`);
        });
        return true;
      }
    }
    return false;
  }

  async function suspend(): Promise<boolean> {
    const id = pick(o.playing());
    if (!id) return false;
    const reason = pick(REASONS.suspended);
    if (!(await move(id, { status: 'suspended', reason }))) return false;
    o.log(`${id} suspended (${reason}); resumes in ${Math.round(holdMs / 60_000)} min`);
    later(holdMs, async () => {
      if (await move(id, { status: 'live', reason: 'Play resumed' })) o.log(`${id} resumed`);
    });
    return true;
  }

  const tick = async () => {
    // Alternate; when the one due has nothing to act on, the other goes instead.
    const [a, b] = turn++ % 2 === 0 ? [postpone, suspend] : [suspend, postpone];
    if (!(await a())) await b();
  };
  later(o.firstMs ?? 5 * 60_000, async () => {
    await tick();
    const every = setInterval(() => {
      if (!stopped) void tick().catch((err: unknown) => o.log(`disruption failed: ${err instanceof Error ? err.message : String(err)}`));
    }, everyMs);
    every.unref();
    timers.add(every);
  });
  return {
    stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
