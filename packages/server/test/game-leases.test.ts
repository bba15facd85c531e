import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/domain/clock.js';
import type { Db } from '../src/store/sql/db.js';
import { GameLeases } from '../src/store/consensus/leases.js';
import { engines, freshDb } from './helpers.js';

const TTL = 8000;

describe.each(engines())('another node’s lease, remembered (store/consensus/leases.ts) on %s', (engine) => {
  let db: Db;
  beforeAll(async () => {
    db = (await freshDb(engine)).db;
  });
  afterAll(async () => {
    await db.close();
  });

  /** Nodes A and B on one clock; A has claimed `game` and B, refused, names A as its owner. */
  async function ownedByA(n: number) {
    const clock = new ManualClock();
    const a = new GameLeases(db, clock, 'node-a', TTL);
    const b = new GameLeases(db, clock, 'node-b', TTL);
    const game = `leases_${engine}_${n}`;
    expect(await a.claim(game)).toMatchObject({ owned: true });
    expect(await b.claim(game)).toEqual({ owned: false, owner: 'node-a' });
    return { clock, a, b, game };
  }

  it('names the owner without reading the store again until the lease would lapse, and reads it again once told the owner is gone', async () => {
    const { a, b, game } = await ownedByA(1);

    // A lets the game go: B still routes to A (which would take the game back when asked) ...
    await a.release([game]);
    expect(await b.claim(game)).toEqual({ owned: false, owner: 'node-a' });
    // ... until A does not answer as the owner: then B reads the lease, finds it free and takes it.
    b.forgetOwner(game);
    expect(await b.claim(game)).toMatchObject({ owned: true });
    expect(await a.claim(game)).toEqual({ owned: false, owner: 'node-b' });
  });

  it('reads the lease again once it would have lapsed, and takes the game of a node that died', async () => {
    const { clock, b, game } = await ownedByA(2);
    // A dies without a word; its lease lapses on the clock, and B's memory of it with it.
    clock.advance(TTL - 1);
    expect(await b.claim(game)).toEqual({ owned: false, owner: 'node-a' });
    clock.advance(1);
    expect(await b.claim(game)).toMatchObject({ owned: true, fresh: true });
  });
});
