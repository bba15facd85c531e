import { invalid } from '../../domain/errors.js';
import { scopeFor, type Principal, type ScopeFilter } from '../../domain/scopes.js';
import type { Clock } from '../../domain/clock.js';
import type { ReferenceRepo } from './reference.js';

/**
 * Which leagues exist and their sport, read through from the reference data. A league it has not
 * seen reloads the whole list (at most once a second) or, between reloads, is looked up alone, so a
 * league imported while the service runs is known at once and an unknown one costs one indexed read.
 */
export class LeagueDirectory {
  private bySport = new Map<string, string>();
  private loadedAt = 0;
  constructor(
    private readonly reference: ReferenceRepo,
    private readonly clock: Clock,
  ) {}

  async sportOf(league: string): Promise<string | undefined> {
    const known = this.bySport.get(league);
    if (known !== undefined) return known;
    if (this.clock.now() - this.loadedAt > 1000) {
      const rows = await this.reference.leagues();
      this.bySport = new Map(rows.map((r) => [r.id, r.sport]));
      this.loadedAt = this.clock.now();
      return this.bySport.get(league);
    }
    const sport = await this.reference.leagueSport(league);
    if (sport !== undefined) this.bySport.set(league, sport);
    return sport;
  }

  /** 400 for a league that does not exist, else the league's sport. */
  async require(league: string, param = 'league'): Promise<string> {
    const sport = await this.sportOf(league);
    if (sport === undefined) throw invalid('invalid_parameter', `Unknown league '${league}'; GET /v1/seasons lists them.`, param);
    return sport;
  }

  /** The key's scope narrowed by explicit sport/league filters (403 outside the scope, 400 for unknown leagues). */
  async scope(p: Principal, sport?: string, league?: string): Promise<ScopeFilter> {
    const leagueSport = league !== undefined ? await this.require(league) : undefined;
    if (sport !== undefined && leagueSport !== undefined && sport !== leagueSport) {
      throw invalid('invalid_parameter', `League '${league}' is ${leagueSport}, not ${sport}.`, 'league');
    }
    return scopeFor(p, sport, league, leagueSport);
  }
}
