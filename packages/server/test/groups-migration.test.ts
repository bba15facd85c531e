import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillGroupsFromNames } from '../src/store/migrations/0011-groups.js';
import type { Db } from '../src/store/sql/db.js';
import { engines, freshDb } from './helpers.js';

/**
 * Migration 0011 on a database imported before competitions had a group: the group comes from
 * the game's name, on both engines, and games outside a group stage keep none.
 */
describe.each(engines())('0011_groups fills the group of games imported without one (%s)', (engine) => {
  let db: Db;
  beforeAll(async () => {
    db = (await freshDb(engine)).db;
  });
  afterAll(async () => db.close());

  it('every 2022 group-stage game gets its group back from its name, knockout games none', async () => {
    const k = db.kysely;
    const before = await k.selectFrom('competitions').select(['id', 'group_name']).where('season_id', '=', 'wc_2022').orderBy('id').execute();
    expect(before.filter((r) => r.group_name !== null)).toHaveLength(48);
    await k.updateTable('competitions').set({ group_name: null }).execute();
    await fillGroupsFromNames(k, engine);
    const after = await k.selectFrom('competitions').select(['id', 'group_name', 'name']).where('season_id', '=', 'wc_2022').orderBy('id').execute();
    expect(after.map((r) => [r.id, r.group_name])).toEqual(before.map((r) => [r.id, r.group_name]));
    expect(new Set(after.map((r) => r.group_name))).toEqual(new Set([null, 'Group A', 'Group B', 'Group C', 'Group D', 'Group E', 'Group F', 'Group G', 'Group H']));
    // An international friendly has no group.
    const intl = await k.selectFrom('competitions').select('group_name').where('league', '=', 'intl').where('group_name', 'is not', null).execute();
    expect(intl).toHaveLength(0);
  });
});
