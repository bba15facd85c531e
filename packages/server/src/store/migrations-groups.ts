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
      const marker = ' · Group ';
      const at = engine === 'postgres' ? sql`strpos(name, ${marker})` : sql`instr(name, ${marker})`;
      await sql`update competitions set group_name = substr(name, ${at} + 3) where name like ${'% · Group %'}`.execute(db);
      await db.schema.createIndex('competitions_season_group').on('competitions').columns(['season_id', 'group_name']).execute();
    },
  };
}
