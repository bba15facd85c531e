import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LogSink } from '../src/process/log-sink.js';
import { tmpDir, until } from './helpers.js';
import { freePort, seededDataDir, startSvc } from './process.js';

/** A destination that takes bytes and never finishes writing them, like a pipe nobody reads. */
const stuck = () => new Writable({ highWaterMark: 1024, write: () => undefined });

describe('the log output (log-sink.ts)', () => {
  it('buffers up to its bound for a reader that stopped, then drops lines and counts them, and says so once it can write again', () => {
    const out = stuck();
    const sink = new LogSink(out, 64 * 1024);
    const line = `${JSON.stringify({ level: 30, msg: 'x'.repeat(180) })}\n`;
    for (let i = 0; i < 10_000; i++) sink.write(line);
    expect(out.writableLength).toBeLessThanOrEqual(64 * 1024 + line.length);
    expect(sink.dropped).toBeGreaterThan(9_000);

    const written: string[] = [];
    const fine = new Writable({ write: (chunk: Buffer, _enc, done) => (written.push(chunk.toString()), done()) });
    const again = new LogSink(fine, 64 * 1024);
    again.dropped = 3;
    again.write(line);
    expect(JSON.parse(written[0])).toMatchObject({ level: 40, dropped: 3 });
    expect(written[1]).toBe(line);
    expect(again.dropped).toBe(0);
  });

  it('stops writing after an error (the reader went away) without throwing', async () => {
    const out = new Writable({ write: (_c, _e, done) => done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })) });
    const sink = new LogSink(out);
    sink.write('one\n');
    await until(() => sink.closed, 2_000, 'the error to be seen');
    sink.write('two\n');
    expect(sink.dropped).toBe(1);
  });

  it('a running svc serve whose stdout pipe is full and then closed keeps answering, and a SIGTERM still ends it', async () => {
    const dir = tmpDir();
    const fifo = path.join(dir, 'stdout');
    execFileSync('mkfifo', [fifo]);
    // The test holds the read end and never reads from it: the pipe fills after ~64 KB of log lines.
    const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const writer = fs.openSync(fifo, 'w');
    const port = await freePort();
    const p = startSvc(['serve'], { SVC_DATA_DIR: seededDataDir(), SVC_PORT: String(port) }, { stdout: writer });
    fs.closeSync(writer);
    const get = async () => (await fetch(`http://127.0.0.1:${port}/livez`, { signal: AbortSignal.timeout(5_000) })).status;
    try {
      await until(async () => (await get().catch(() => 0)) === 200, 60_000, 'svc to listen');
      // Two log lines a request at info: some 300 KB, several times what the pipe holds.
      for (let i = 0; i < 1_000; i++) expect(await get()).toBe(200);
      // The reader goes away: every write now fails with EPIPE.
      fs.closeSync(reader);
      for (let i = 0; i < 300; i++) expect(await get()).toBe(200);
      p.signal('SIGTERM');
      expect((await p.exited).code).toBe(0);
    } finally {
      if (p.child.exitCode === null) p.signal('SIGKILL');
    }
  }, 120_000);
});
