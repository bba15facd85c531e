import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/domain/clock.js';
import { GameDirectory } from '../src/live/games.js';
import { CompetitionRepo } from '../src/store/reference/competitions.js';
import type { Db } from '../src/store/sql/db.js';
import { freshDb } from './helpers.js';

describe('the game directory of a node (live/games.ts)', () => {
  let db: Db;
  beforeAll(async () => {
    ({ db } = await freshDb('sqlite'));
  });
  afterAll(async () => {
    await db?.close();
  });

  it('forgets soon that an id named no game: a game another node creates under it becomes reportable here', async () => {
    const clock = new ManualClock();
    // Two nodes' directories over one store; the game is created through the other one.
    const here = new GameDirectory(new CompetitionRepo(db), clock);
    const template = await db.kysely.selectFrom('competitions').selectAll().where('sport', '=', 'basketball').orderBy('n', 'desc').limit(1).executeTakeFirstOrThrow();
    const competitors = await db.kysely.selectFrom('competitors').selectAll().where('competition_id', '=', template.id).execute();
    const gameId = `basketball_${template.n + 1}`;

    expect(await here.byGameId(gameId)).toBeUndefined();
    // The next number is taken meanwhile, as a sandbox replay's game is on another node.
    const id = `${template.id}-next`;
    await db.kysely.insertInto('competitions').values({ ...template, id, n: template.n + 1, source_key: null }).execute();
    await db.kysely.insertInto('competitors').values(competitors.map((c) => ({ ...c, competition_id: id }))).execute();

    // Within the short memory of an unknown id nothing is read again (a flood of made-up ids costs no reads) ...
    expect(await here.byGameId(gameId)).toBeUndefined();
    // ... after it the game is found.
    clock.advance(GameDirectory.UNKNOWN_FOR_MS);
    expect(await here.byGameId(gameId)).toMatchObject({ gameId, competitionId: id, sport: 'basketball' });
  });
});
