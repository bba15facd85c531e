import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Sequencer } from '../src/stream/sequencer.js';
import { storedEvent, until } from './helpers.js';

const event = storedEvent;

describe('Sequencer', () => {
  it('catches up from the store after the bus was away, with no later event to show the hole, and drops the repeats that follow', async () => {
    const emitted: number[] = [];
    const stored = [1, 2, 3, 4, 5].map(event);
    const s = new Sequencer(
      (events) => emitted.push(...events.map((e) => e.seq)),
      async (after, before) => stored.filter((e) => e.seq > after && e.seq < before),
      10_000,
    );
    s.start(0);
    s.push([event(1), event(2)]);
    // 3..5 were appended elsewhere while the bus was away: nothing arrives, nothing is held.
    await s.catchUp(5);
    expect(emitted).toEqual([1, 2, 3, 4, 5]);
    // The bus delivers late copies and then goes on.
    s.push([event(4), event(5), event(6)]);
    expect(emitted).toEqual([1, 2, 3, 4, 5, 6]);
    // Nothing new in the store: nothing to do.
    await s.catchUp(6);
    expect(emitted).toEqual([1, 2, 3, 4, 5, 6]);
    s.close();
  });

  it('emits the events the bus carried while the starting point was read, even those at or below it, and never goes back', async () => {
    const emitted: number[] = [];
    const reads: [number, number][] = [];
    const s = new Sequencer(
      (events) => emitted.push(...events.map((e) => e.seq)),
      async (after, before) => {
        reads.push([after, before]);
        return [];
      },
      1,
    );
    // 4 and 5 were appended and published after the gateway subscribed, while its read of the
    // store's last seq was on its way (slow on a busy database): the read answers 5, yet a client
    // connected meanwhile has seen neither.
    s.push([event(4), event(5)]);
    s.start(5);
    s.push([event(6)]);
    s.push([event(5), event(3)]);
    await new Promise((r) => setTimeout(r, 20));
    expect(emitted).toEqual([4, 5, 6]);
    expect(reads).toEqual([]);
    s.close();
  });

  it('reads a hole again when the store fails to answer, instead of skipping the event in it', async () => {
    const emitted: number[] = [];
    const stored = [1, 2, 3].map(event);
    let failures = 2;
    const s = new Sequencer(
      (events) => emitted.push(...events.map((e) => e.seq)),
      async (after, before) => {
        // A busy database: the first reads of the hole time out.
        if (failures-- > 0) throw new Error('timeout exceeded when trying to connect');
        return stored.filter((e) => e.seq > after && e.seq < before);
      },
      5,
    );
    s.start(0);
    s.push([event(1)]);
    // 2 was committed, but its publish never comes; 3 shows the hole.
    s.push([event(3)]);
    await until(() => emitted.length >= 3, 2000, 'the hole to be read from the store');
    expect(emitted).toEqual([1, 2, 3]);
    s.close();
  });

  it('gives up a hole the store cannot read only once it holds more than its cap', async () => {
    const emitted: number[] = [];
    const s = new Sequencer(
      (events) => emitted.push(...events.map((e) => e.seq)),
      async () => {
        throw new Error('the store is away');
      },
      5,
      3,
    );
    s.start(0);
    s.push([event(2), event(3), event(4)]);
    await new Promise((r) => setTimeout(r, 50));
    expect(emitted).toEqual([]);
    s.push([event(5)]);
    await until(() => emitted.length > 0, 2000, 'the held events to go out past the cap');
    expect(emitted).toEqual([2, 3, 4, 5]);
    s.close();
  });

  it('emits every stored event once, in seq order, whatever order, repeats and losses the bus has', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 5 }),
        fc.array(fc.record({ stored: fc.boolean(), published: fc.boolean(), repeats: fc.nat(2) }), { minLength: 1, maxLength: 30 }),
        fc.infiniteStream(fc.nat()),
        async (start, plan, randoms) => {
          // seq start+1.. : a rolled-back append leaves a seq that is never stored nor published.
          const store = plan.map((p, i) => ({ ...p, seq: start + 1 + i })).filter((p) => p.stored);
          const emitted: number[] = [];
          const s = new Sequencer(
            (events) => emitted.push(...events.map((e) => e.seq)),
            async (after, before) => store.filter((p) => p.seq > after && p.seq < before).map((p) => event(p.seq)),
            1,
          );
          const bus = store.filter((p) => p.published).flatMap((p) => Array.from({ length: 1 + p.repeats }, () => event(p.seq)));
          const r = randoms[Symbol.iterator]();
          const next = () => r.next().value ?? 0;
          for (let i = bus.length - 1; i > 0; i--) {
            const j = next() % (i + 1);
            [bus[i], bus[j]] = [bus[j], bus[i]];
          }
          s.push(bus.slice(0, 2));
          s.start(start);
          for (let i = 2; i < bus.length; ) {
            const n = 1 + (next() % 3);
            s.push(bus.slice(i, i + n));
            i += n;
          }
          // What the bus never brought after the last published event is not the sequencer's to find.
          const lastPublished = Math.max(start, ...store.filter((p) => p.published).map((p) => p.seq));
          const want = store.filter((p) => p.seq <= lastPublished).map((p) => p.seq);
          await until(() => emitted.length >= want.length, 2000, 'the emitted sequence');
          s.close();
          expect(emitted).toEqual(want);
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });
});
