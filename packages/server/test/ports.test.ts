import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from './ports.js';
import { ROOT } from './process.js';

const run = promisify(execFile);
const ephemeralLow = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

describe('ports for the processes tests start', () => {
  it('come from below the ephemeral range, where no listen(0) or outgoing connection can take them first', async () => {
    const ports = await Promise.all(Array.from({ length: 100 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeralLow);
    }
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('are never the same in two processes picking at once (TypeScript and Python alike)', async () => {
    const ts = run(process.execPath, ['--import', 'tsx', '-e', `import('./packages/server/test/ports.ts').then(async (m) => { const p = []; for (let i = 0; i < 200; i++) p.push(await m.freePort()); console.log(JSON.stringify(p)); })`], { cwd: ROOT });
    // Without Debian's python3-httpx and python3-pytest (the Python client's checks skip then) the conftest cannot load.
    const py = run('/usr/bin/python3', ['-c', 'import json, sys; sys.path.insert(0, "clients/python/tests"); from conftest import free_port; print(json.dumps([free_port() for _ in range(200)]))'], { cwd: ROOT }).then(
      (r) => r.stdout,
      (e: unknown) => {
        if (!process.env.CI && /No module named '(pytest|httpx)'/.test(String(e))) return '[]';
        throw e;
      },
    );
    const here: number[] = [];
    for (let i = 0; i < 200; i++) here.push(await freePort());
    const picked = [...here, ...(JSON.parse((await ts).stdout) as number[])];
    picked.push(...(JSON.parse(await py) as number[]));
    expect(picked.length).toBeGreaterThanOrEqual(process.env.CI ? 600 : 400);
    expect(new Set(picked).size).toBe(picked.length);
  });
});
