import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { Live } from '../live/index.js';
import type { CompetitionRepo } from '../store/reference/competitions.js';
import type { Db } from '../store/sql/db.js';
import { ReplayRepo } from '../store/accounts/replays.js';
import { ReplayDriver } from './driver.js';
import { ReplayService } from './service.js';

export interface Replays {
  service: ReplayService;
  driver: ReplayDriver;
}

/** Sandbox replays (docs/replays.md): the rules the routes use and the driver the background runs. */
export function createReplays(deps: { db: Db; config: Config; clock: Clock; nodeId: string; competitions: CompetitionRepo; live: Live }): Replays {
  const replays = new ReplayRepo(deps.db);
  const driver = new ReplayDriver({
    db: deps.db,
    config: deps.config,
    clock: deps.clock,
    nodeId: deps.nodeId,
    replays,
    competitions: deps.competitions,
    games: deps.live.games,
    ingest: deps.live.ingest,
    official: deps.live.official,
    schedule: deps.live.schedule,
  });
  const service = new ReplayService({ clock: deps.clock, replays, competitions: deps.competitions, games: deps.live.games, official: deps.live.official, driver });
  return { service, driver };
}
