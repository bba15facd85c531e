import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APIError, type Change, type Competition } from '../src/index.js';
import { liveSvc, type LiveSvc } from './support.js';

describe('changes and schedule changes in the TypeScript client, against a real svc', () => {
  let s: LiveSvc;
  let games: Competition[];
  beforeAll(async () => {
    s = await liveSvc();
    games = (await s.svc.competitions.list({ sport: 'soccer', date: 'today', status: 'scheduled', limit: 50 })).data;
  });
  afterAll(() => s.close());

  it('changeStatus() postpones; the game’s events carry the status event, typed', async () => {
    const c = games[0];
    const moved = await s.svc.competitions.changeStatus(c.id, { status: 'postponed', reason: 'Heavy rain' });
    expect(moved).toMatchObject({ id: c.id, status: 'postponed', status_reason: 'Heavy rain', original_start_time: null });
    const gameId = `soccer_${c.id.split('_').pop()}`;
    const events = [];
    for await (const e of s.svc.games.events(gameId, { types: 'status' })) events.push(e);
    expect(events).toHaveLength(1);
    const e = events[0];
    // The union narrows on `type`.
    if (e.type !== 'status') throw new Error('expected a status event');
    expect([e.previous_status, e.status, e.reason]).toEqual(['scheduled', 'postponed', 'Heavy rain']);
    await expect(s.svc.competitions.changeStatus(c.id, { status: 'final' })).rejects.toMatchObject({ status: 409, code: 'invalid_transition' });
  });

  it('changes.list() walks every page to the present end; follow() long-polls from a kept cursor and yields new changes', async () => {
    const listed: Change[] = [];
    for await (const ch of s.svc.changes.list({ limit: 1 })) listed.push(ch);
    expect(listed.length).toBeGreaterThanOrEqual(2);
    expect(listed.map((x) => x.id)).toEqual([...listed.map((x) => x.id)].sort());
    const first = await s.svc.changes.list({ limit: 1000 });
    const cursor = first.next_cursor;
    if (cursor === null) throw new Error('no cursor');
    const follower = s.svc.changes.follow({ since: cursor, wait: 5 });
    const seen: Change[] = [];
    const done = (async () => {
      for await (const ch of follower) {
        seen.push(ch);
        if (seen.length === 2) follower.close();
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    await s.svc.competitions.changeStatus(games[1].id, { status: 'cancelled' });
    await done;
    expect(seen.map((x) => x.type).sort()).toEqual(['competition.updated', 'event.created']);
    // The follower's cursor resumes after what it yielded: nothing new, nothing again.
    const after = await s.svc.changes.list({ since: follower.cursor });
    expect(after.data).toEqual([]);
  });

  it('export() exposes X-Changes-Cursor; a bad cursor is a typed error', async () => {
    const ex = s.svc.export({ league: 'wc', season: '2022', entity: 'competitions' });
    let n = 0;
    for await (const _ of ex) n++;
    expect(n).toBeGreaterThan(0);
    expect(ex.changesCursor).toMatch(/^[A-Za-z0-9_-]+$/);
    await expect(s.svc.changes.list({ since: 'nope' })).rejects.toBeInstanceOf(APIError);
  });
});
