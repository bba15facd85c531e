import { sql, type Kysely, type Migration } from 'kysely';

/**
 * A competition's tournament group (docs/standings.md): `group_name` (`group` is an SQL word),
 * null for games outside a group stage. Games imported before the column existed carry their
 * group in their name (`FIFA World Cup 2022 · Group A`, archive/wc.ts), so it is filled from there.
 */
export function groupsMigration(engine: 'sqlite' | 'postgres'): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('competitions').addColumn('group_name', 'text').execute();
      await fillGroupsFromNames(db, engine);
      await db.schema.createIndex('competitions_season_group').on('competitions').columns(['season_id', 'group_name']).execute();
    },
  };
}

/** `Group X` from a name `… · Group X` (archive/wc.ts names group-stage games so), for games without a group. */
export async function fillGroupsFromNames<DB>(db: Kysely<DB>, engine: 'sqlite' | 'postgres'): Promise<void> {
  const marker = ' · Group ';
  const at = engine === 'postgres' ? sql`strpos(name, ${marker})` : sql`instr(name, ${marker})`;
  await sql`update competitions set group_name = substr(name, ${at} + 3) where group_name is null and name like ${'% · Group %'}`.execute(db);
}
