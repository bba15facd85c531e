import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startReceiver, type Receiver } from './webhook-receiver.js';
import { tmpDir } from './helpers.js';
import { serveSvc, type SvcProcess } from './process.js';

const KEY = `svc_test_${'Crash0Test1Key2'.padEnd(32, 'x')}`;
const EVENTS = 1000;


describe('webhook delivery survives a SIGKILL', () => {
  let rx: Receiver;
  let svc: SvcProcess | null = null;
  afterAll(async () => {
    await svc?.kill();
    await rx?.close();
  });

  const startServer = (dataDir: string) =>
    serveSvc(dataDir, {
      SVC_BOOTSTRAP_KEY: KEY,
      SVC_WEBHOOK_ALLOW_PRIVATE: 'on',
      // A short timeout keeps the lease short: rows held by the killed process return sooner.
      SVC_WEBHOOK_TIMEOUT_MS: '1000',
    });

  it('delivers every one of 1,000 events after the server is killed mid-delivery', { timeout: 240_000 }, async () => {
    const dataDir = tmpDir('svc-crash-');
    fs.copyFileSync(inject('sqliteTemplate'), path.join(dataDir, 'svc.db'));
    rx = await startReceiver();
    const first = await startServer(dataDir);
    svc = first;
    const { base } = first;
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

    const ep = await fetch(`${base}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: `${rx.url}/slow/20/crash`, tier: 'confirmed' }) });
    expect(ep.status).toBe(201);
    const games = (await (await fetch(`${base}/v1/games?sport=soccer&status=scheduled&limit=1`, { headers })).json()).data;
    const game = games[0];
    const competitor = game.competitors[0].entity_id;
    // Official plays 31 s apart: each is its own confirmed event (the consensus window is 30 s).
    const start = Date.now() - EVENTS * 31_000;
    const plays = Array.from({ length: EVENTS }, (_, i) => ({
      period: { unit: 'half', num: 1, label: '1st half' },
      competitor_id: competitor,
      event_type: 'goal',
      points: 1,
      ts: new Date(start + i * 31_000).toISOString(),
    }));
    for (let i = 0; i < EVENTS; i += 500) {
      const res = await fetch(`${base}/v1/competitions/${game.competition_id}/plays`, { method: 'POST', headers, body: JSON.stringify({ plays: plays.slice(i, i + 500) }) });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    const expected = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: { data: { id: string; tier: string }[]; next_cursor: string | null } = await (
        await fetch(`${base}/v1/games/${game.id}/events?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { headers })
      ).json();
      for (const e of page.data) if (e.tier === 'confirmed') expected.add(e.id);
      cursor = page.next_cursor;
    } while (cursor);
    expect(expected.size).toBe(EVENTS);

    const distinct = () => new Set(rx.header('x-svc-event-id').filter(Boolean)).size;
    await rx.waitFor(() => distinct() >= 100, 30_000, '100 deliveries before the kill');
    await first.kill();
    const beforeRestart = distinct();
    expect(beforeRestart).toBeLessThan(EVENTS);

    // The restarted node listens elsewhere; only the receiver is watched from here on.
    const second = await startServer(dataDir);
    svc = second;
    await rx.waitFor(() => distinct() >= EVENTS, 120_000, 'every event after the restart');
    const seen = new Set(rx.header('x-svc-event-id'));
    for (const id of expected) expect(seen.has(id), id).toBe(true);
    // At least once: a few attempts in flight at the kill may arrive twice, and that is allowed.
    expect(rx.requests.length).toBeGreaterThanOrEqual(EVENTS);
    await second.stop();
    svc = null;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
