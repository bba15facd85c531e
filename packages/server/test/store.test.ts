import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDb } from '../src/store/db.js';
import { sleep, tmpDir } from './helpers.js';


describe('SQLite WAL checkpointing off the event loop', () => {
  /** Writes ~4 MB (about 1,000 pages) in one transaction. */
  const writeBatch = async (db: Awaited<ReturnType<typeof openDb>>) => {
    await sql`insert into scratch (b) select randomblob(4000) from (with recursive n(i) as (select 1 union all select i + 1 from n where i < 1000) select i from n)`.execute(db.kysely);
  };
  const walBytes = (dir: string) => fs.statSync(path.join(dir, 'svc.db-wal')).size;

  it('keeps the WAL from growing without any commit paying for a checkpoint', async () => {
    const dir = tmpDir();
    const db = await openDb({ dataDir: dir, databaseUrl: null, backgroundCheckpoint: true });
    try {
      const auto = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db.kysely);
      expect(auto.rows[0].wal_autocheckpoint).toBe(0);
      await sql`create table scratch (b blob)`.execute(db.kysely);
      await writeBatch(db);
      const first = walBytes(dir);
      expect(first).toBeGreaterThan(4_000_000);
      // The thread checkpoints every 250 ms; once it has, the next write starts the WAL over.
      await sleep(1000);
      await writeBatch(db);
      expect(walBytes(dir)).toBeLessThan(first * 1.2);
      const rows = await sql<{ n: number }>`select count(*) as n from scratch`.execute(db.kysely);
      expect(rows.rows[0].n).toBe(2000);
    } finally {
      await db.close();
    }
  });

  it('without it (the default for short-lived commands), SQLite checkpoints in the commit as usual', async () => {
    const dir = tmpDir();
    const db = await openDb({ dataDir: dir, databaseUrl: null });
    try {
      const auto = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db.kysely);
      expect(auto.rows[0].wal_autocheckpoint).toBe(1000);
    } finally {
      await db.close();
    }
  });

  it('a closed database reopens with everything the checkpointer and the writer left', async () => {
    const dir = tmpDir();
    const db = await openDb({ dataDir: dir, databaseUrl: null, backgroundCheckpoint: true });
    await sql`create table scratch (b blob)`.execute(db.kysely);
    await writeBatch(db);
    await db.close();
    const again = await openDb({ dataDir: dir, databaseUrl: null });
    try {
      const rows = await sql<{ n: number }>`select count(*) as n from scratch`.execute(again.kysely);
      expect(rows.rows[0].n).toBe(1000);
    } finally {
      await again.close();
    }
  });
});
