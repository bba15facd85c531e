import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { auth, until } from './helpers.js';
import { startTwoNodes, stopNodes, type ClusterNode } from './two-nodes.js';
import { SseClient } from './sse-client.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';
import { connect } from './ws-client.js';

/**
 * Corrections on a cluster (docs/corrections.md): two nodes on one PostgreSQL and one Redis. A
 * score withdrawn on one node is withdrawn once, however many nodes are asked at the same time,
 * and every node's stream, webhooks, change feed and reads follow.
 */
describe('corrections on two nodes, one PostgreSQL, one Redis', () => {
  const redisUrl = inject('redisUrl');
  const pgTemplate = inject('pgTemplate');
  const available = Boolean(redisUrl && pgTemplate);
  if (!available && process.env.CI) throw new Error('cluster tests need PostgreSQL and Redis in CI');

  type Node = ClusterNode;
  const nodes: Node[] = [];
  const clients: { close(): void }[] = [];
  let rx: Receiver;
  let key: string;
  let reporters: string[];
  interface Game {
    id: string;
    competition_id: string;
    competitors: { entity_id: string; role: string; score: number }[];
  }
  let games: Game[];

  beforeAll(async () => {
    if (!available || !redisUrl) return;
    nodes.push(...(await startTwoNodes(redisUrl, { webhookAllowPrivate: true })));
    const keys = nodes[0].built.services.keys;
    key = (await keys.create({ name: 'all', plan: 'internal', products: ['live', 'archive', 'source'] }, new Date())).key;
    reporters = await Promise.all([1, 2, 3].map(async (i) => (await keys.create({ name: `r${i}`, plan: 'internal', products: ['report'] }, new Date())).key));
    games = (await (await fetch(`${nodes[0].http}/v1/games?date=today&sport=soccer&status=scheduled`, { headers: auth(key) })).json()).data;
    rx = await startReceiver();
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await rx?.close();
    await stopNodes(nodes);
  });

  const req = async (node: Node, method: string, path: string, body?: unknown, k = key) => {
    const res = await fetch(`${node.http}${path}`, { method, headers: { ...auth(k), ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const scores = async (node: Node, g: Game) => ((await req(node, 'GET', `/v1/competitions/${g.competition_id}`)).body.data as Game).competitors.map((c) => c.score);
  const code = (entityId: string) => entityId.slice(entityId.lastIndexOf(':') + 1);
  const HALF1 = { unit: 'half', num: 1, label: '1st half' };

  it.runIf(available)('a goal withdrawn on both nodes at once is withdrawn once: one 201 and one 409, one score_retracted on each node’s stream, one webhook delivery, one change; both nodes read the score back', async () => {
    const [a, b] = nodes;
    const g = games[0];
    const home = g.competitors.find((c) => c.role === 'home')?.entity_id ?? '';
    const onB = await connect(`${b.ws}/v1/stream?game=${g.id}&tier=confirmed`, key);
    const sseOnA = new SseClient(`${a.http}/v1/stream?game=${g.id}&tier=confirmed`, key);
    clients.push(onB, sseOnA);
    await onB.until((c) => c.frames.some((f) => f.type === 'subscribed'), 10_000, 'subscribed');
    await sseOnA.until((c) => c.of('subscribed').length > 0, 10_000, 'subscribed (SSE)');
    expect((await req(a, 'POST', '/v1/webhooks', { url: `${rx.url}/`, tier: 'confirmed' })).status).toBe(201);

    const posted = await req(a, 'POST', `/v1/competitions/${g.competition_id}/plays`, { plays: [{ period: HALF1, competitor_id: home, event_type: 'kickoff', points: 0 }, { period: HALF1, competitor_id: home, event_type: 'goal', points: 1 }] });
    expect(posted.status).toBe(201);
    await until(async () => (await scores(b, g))[0] === 1, 10_000, 'the goal on node B');
    const goal = ((await req(b, 'GET', `/v1/games/${g.id}/events`)).body.data as { id: string; type: string }[]).find((e) => e.type === 'score');
    await onB.until((c) => c.events().some((e) => e.id === goal?.id), 10_000, 'the goal on node B’s stream');

    const both = await Promise.all([a, b].map((n) => req(n, 'POST', `/v1/competitions/${g.competition_id}/plays`, { event_type: 'score_withdrawn', withdraws: goal?.id })));
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(both.find((r) => r.status === 409)?.body.error).toMatchObject({ type: 'conflict', code: 'already_withdrawn', param: 'withdraws' });

    const fixes = ((await req(b, 'GET', `/v1/games/${g.id}/events`)).body.data as { id: string; type: string; retracted_id?: string }[]).filter((e) => e.type === 'score_retracted');
    expect(fixes).toEqual([expect.objectContaining({ tier: 'confirmed', retracted_id: goal?.id })]);
    const fix = fixes[0];
    await onB.until((c) => c.events().some((e) => e.id === fix.id), 10_000, 'the correction on node B’s stream');
    await sseOnA.until((c) => c.events().some((m) => m.id === fix.id), 10_000, 'the correction on node A’s SSE');
    // Both nodes read the plays the withdrawal left: exactly one correction play.
    const corrections = ((await req(b, 'GET', `/v1/competitions/${g.competition_id}/plays`)).body.data as { event_type: string }[]).filter((p) => p.event_type === 'score_withdrawn');
    expect(corrections).toHaveLength(1);
    await until(async () => (await scores(a, g))[0] === 0 && (await scores(b, g))[0] === 0, 10_000, 'the score back on both nodes');

    // Each node's dispatcher takes what is due: the correction reaches the receiver once.
    await Promise.all([a, b].map((n) => n.built.services.webhooks.dispatcher.runOnce()));
    await rx.waitFor((r) => r.requests.some((q) => q.headers['x-svc-event-id'] === fix.id), 10_000, 'the correction’s delivery');
    await Promise.all([a, b].map((n) => n.built.services.webhooks.dispatcher.runOnce()));
    expect(rx.requests.filter((q) => q.headers['x-svc-event-id'] === fix.id)).toHaveLength(1);
    // Stream: one frame per node, whatever the race.
    await new Promise((r) => setTimeout(r, 300));
    expect(onB.events().filter((e) => e.type === 'score_retracted')).toHaveLength(1);
    expect(sseOnA.events().filter((m) => m.event === 'score_retracted')).toHaveLength(1);
    // The change feed's log, which every node reads: the correction once.
    const created = await b.db.kysely.selectFrom('changes').select('seq').where('object_id', '=', fix.id).execute();
    expect(created).toHaveLength(1);
  });

  it.runIf(available)('the crowd’s own game, reported through both nodes, is scored on both; a correction on node A moves it back on node B', async () => {
    const [a, b] = nodes;
    const g = games[1];
    const home = g.competitors.find((c) => c.role === 'home')?.entity_id ?? '';
    const onB = await connect(`${b.ws}/v1/stream?game=${g.id}&tier=confirmed`, key);
    clients.push(onB);
    await onB.until((c) => c.frames.some((f) => f.type === 'subscribed'), 10_000, 'subscribed');
    // A, B, A: the second report reaches the node that does not own the game's consensus.
    let last: { event_id: string; tier: string } | undefined;
    for (const [i, node] of [a, b, a].entries()) {
      const res = await req(node, 'POST', '/v1/reports', { game_id: g.id, team: code(home), points: 1, clock: "33'" }, reporters[i]);
      expect(res.status).toBe(202);
      last = res.body.data[0];
    }
    expect(last?.tier).toBe('confirmed');
    await until(async () => (await scores(b, g)).join('-') === '1-0', 10_000, 'the crowd score on node B');
    expect(await scores(a, g)).toEqual([1, 0]);
    const box = (await req(b, 'GET', `/v1/competitions/${g.competition_id}/boxscore`)).body.data;
    expect(box.competitors.map((c: { score: number }) => c.score)).toEqual([1, 0]);

    const res = await req(a, 'POST', `/v1/competitions/${g.competition_id}/plays`, { event_type: 'score_withdrawn', withdraws: last?.event_id });
    expect(res.status).toBe(201);
    await onB.until((c) => c.events().some((e) => e.type === 'score_retracted' && e.retracted_id === last?.event_id), 10_000, 'the correction on node B');
    await until(async () => (await scores(b, g)).join('-') === '0-0', 10_000, 'the score back on node B');
  });
});
