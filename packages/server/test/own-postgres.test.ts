import fs from 'node:fs';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { OwnPostgres } from './own-postgres.js';

let own: OwnPostgres | null = null;
afterAll(async () => {
  await own?.freeze('SIGCONT').catch(() => undefined);
  await own?.remove();
});

/** The cluster's processes, its postmaster first, with their state letter. */
async function clusterStates(cluster: OwnPostgres): Promise<Map<number, string>> {
  const states = new Map<number, string>();
  for (const pid of [cluster.postmasterPid(), ...(await cluster.childPids())]) {
    try {
      // The state follows the command name's closing parenthesis: "pid (comm) S …".
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      states.set(pid, stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
    } catch {
      // Ended between the listing and the read: not part of the cluster any more.
    }
  }
  return states;
}

describe("a test's own PostgreSQL", () => {
  it('freezes and thaws every process of the cluster while sessions come and go, never failing on one that just ended', async () => {
    own = await OwnPostgres.start();
    const url = await own.url('postgres');
    let churning = true;
    // Short sessions, four at a time: backends end on their own between any listing and a signal.
    const churn = Array.from({ length: 4 }, async () => {
      while (churning) {
        const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000, query_timeout: 2_000 });
        client.on('error', () => undefined);
        await client
          .connect()
          .then(() => client.query('select 1'))
          .catch(() => undefined);
        await client.end().catch(() => undefined);
      }
    });
    try {
      for (let round = 0; round < 20; round++) {
        await own.freeze('SIGSTOP');
        const frozen = await clusterStates(own);
        // A process that was ending when the cluster froze stays a zombie (Z) until its postmaster runs.
        for (const [pid, state] of frozen) expect(['T', 'Z'], `process ${pid}`).toContain(state);
        await own.freeze('SIGCONT');
      }
    } finally {
      churning = false;
      // A failed thaw must not leave the sessions waiting on a stopped server.
      await own.freeze('SIGCONT').catch(() => undefined);
      await Promise.all(churn);
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    await client.end();
    const thawed = await clusterStates(own);
    for (const [pid, state] of thawed) expect(['S', 'R', 'D', 'Z'], `process ${pid}`).toContain(state);
  });
});
