import type { Kysely, Migration } from 'kysely';

type Engine = 'sqlite' | 'postgres';

/** Migrations are code (not files on disk) so the same list runs on both engines. */
export function initialMigration(engine: Engine): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('plan', 'text', (c) => c.notNull())
        .addColumn('products', 'text', (c) => c.notNull())
        .addColumn('sports', 'text')
        .addColumn('leagues', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createTable('leagues')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('sport', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('synthetic', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('venues')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('city', 'text', (c) => c.notNull())
        .addColumn('country', 'text', (c) => c.notNull())
        .addColumn('lat', 'double precision')
        .addColumn('lng', 'double precision')
        .addColumn('capacity', 'integer')
        .addColumn('synthetic', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('teams')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('sport', 'text', (c) => c.notNull())
        .addColumn('league', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('venue_id', 'text')
        .addColumn('external_ids', 'text', (c) => c.notNull())
        .addColumn('synthetic', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('teams_league_code').on('teams').columns(['league', 'code']).unique().execute();
      await db.schema
        .createTable('players')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('sport', 'text', (c) => c.notNull())
        .addColumn('league', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('search_name', 'text', (c) => c.notNull())
        .addColumn('position', 'text')
        .addColumn('external_ids', 'text', (c) => c.notNull())
        .addColumn('synthetic', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('rosters')
        .addColumn('team_id', 'text', (c) => c.notNull())
        .addColumn('player_id', 'text', (c) => c.notNull())
        .addColumn('season_id', 'text', (c) => c.notNull())
        .addColumn('jersey', 'integer')
        .addColumn('position', 'text')
        .addColumn('from_date', 'text')
        .addColumn('to_date', 'text')
        .addPrimaryKeyConstraint('rosters_pk', ['team_id', 'season_id', 'player_id'])
        .execute();
      await db.schema.createIndex('rosters_player').on('rosters').columns(['player_id', 'season_id']).execute();
      await db.schema
        .createTable('seasons')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('league', 'text', (c) => c.notNull())
        .addColumn('sport', 'text', (c) => c.notNull())
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('start_date', 'text', (c) => c.notNull())
        .addColumn('end_date', 'text', (c) => c.notNull())
        .addColumn('synthetic', 'integer', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('competitions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('sport', 'text', (c) => c.notNull())
        .addColumn('league', 'text', (c) => c.notNull())
        .addColumn('season_id', 'text', (c) => c.notNull())
        .addColumn('n', 'integer', (c) => c.notNull())
        .addColumn('date', 'text', (c) => c.notNull())
        .addColumn('start_time', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('venue_id', 'text')
        .addColumn('name', 'text')
        .addColumn('synthetic', 'integer', (c) => c.notNull())
        .addColumn('source_key', 'text')
        .execute();
      await db.schema.createIndex('competitions_sport_n').on('competitions').columns(['sport', 'n']).unique().execute();
      await db.schema.createIndex('competitions_date').on('competitions').columns(['date', 'id']).execute();
      await db.schema.createIndex('competitions_season').on('competitions').columns(['season_id', 'date', 'id']).execute();
      await db.schema.createIndex('competitions_venue').on('competitions').columns(['venue_id']).execute();
      await db.schema.createIndex('competitions_source_key').on('competitions').columns(['source_key']).unique().execute();
      await db.schema
        .createTable('competitors')
        .addColumn('competition_id', 'text', (c) => c.notNull())
        .addColumn('idx', 'integer', (c) => c.notNull())
        .addColumn('entity_type', 'text', (c) => c.notNull())
        .addColumn('entity_id', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('score', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('competitors_pk', ['competition_id', 'idx'])
        .execute();
      await db.schema.createIndex('competitors_entity').on('competitors').columns(['entity_id', 'competition_id']).execute();
      await db.schema
        .createTable('plays')
        .addColumn('competition_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('period_unit', 'text', (c) => c.notNull())
        .addColumn('period_num', 'integer', (c) => c.notNull())
        .addColumn('period_label', 'text', (c) => c.notNull())
        .addColumn('competitor_id', 'text', (c) => c.notNull())
        .addColumn('player_id', 'text')
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('points', 'integer', (c) => c.notNull())
        .addColumn('clock', 'text')
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('ts', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('plays_pk', ['competition_id', 'seq'])
        .execute();
      await db.schema.createIndex('plays_player').on('plays').columns(['player_id']).execute();
      await db.schema
        .createTable('events')
        .addColumn('seq', engine === 'postgres' ? 'bigserial' : 'integer', (c) =>
          engine === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('tier', 'text', (c) => c.notNull())
        .addColumn('game_id', 'text', (c) => c.notNull())
        .addColumn('competition_id', 'text', (c) => c.notNull())
        .addColumn('sport', 'text', (c) => c.notNull())
        .addColumn('league', 'text', (c) => c.notNull())
        .addColumn('season_id', 'text', (c) => c.notNull())
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('points', 'integer', (c) => c.notNull())
        .addColumn('clock', 'text')
        .addColumn('ts', 'text', (c) => c.notNull())
        .addColumn('agreement', 'double precision', (c) => c.notNull())
        .addColumn('reporters', 'integer', (c) => c.notNull())
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('provisional_id', 'text')
        .addColumn('retracted_id', 'text')
        .execute();
      await db.schema.createIndex('events_game').on('events').columns(['game_id', 'tier', 'seq']).execute();
      await db.schema.createIndex('events_season').on('events').columns(['season_id', 'seq']).execute();
      await db.schema
        .createTable('reports')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('ref', 'text')
        .addColumn('game_id', 'text', (c) => c.notNull())
        .addColumn('team', 'text', (c) => c.notNull())
        .addColumn('points', 'integer', (c) => c.notNull())
        .addColumn('event_type', 'text')
        .addColumn('clock', 'text')
        .addColumn('observed_at', 'text', (c) => c.notNull())
        .addColumn('received_at', 'text', (c) => c.notNull())
        .addColumn('event_id', 'text')
        .addColumn('tier', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('reports_key_ref').on('reports').columns(['key_id', 'ref']).unique().execute();
      await db.schema
        .createTable('meta')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
