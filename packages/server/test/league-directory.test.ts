import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/domain/clock.js';
import type { Db } from '../src/store/sql/db.js';
import { LeagueDirectory } from '../src/store/reference/league-directory.js';
import { ReferenceRepo } from '../src/store/reference/reference.js';
import { freshDb } from './helpers.js';

describe('LeagueDirectory', () => {
  let db: Db;
  beforeAll(async () => {
    ({ db } = await freshDb('sqlite'));
  });
  afterAll(async () => db.close());

  it('knows a league added after its last load at once, without waiting for the next reload', async () => {
    const clock = new ManualClock(Date.parse('2026-06-01T12:00:00Z'));
    const leagues = new LeagueDirectory(new ReferenceRepo(db), clock);
    expect(await leagues.sportOf('wc')).toBe('soccer');
    await db.kysely.insertInto('leagues').values({ id: 'xnew', sport: 'golf', name: 'New league', synthetic: 1 }).execute();
    // Same instant as the load: a full reload is not due, the league must still be found.
    expect(await leagues.sportOf('xnew')).toBe('golf');
    expect(await leagues.sportOf('nope')).toBeUndefined();
  });
});
