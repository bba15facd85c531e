import fs from 'node:fs';
import net from 'node:net';
import type { Writable } from 'node:stream';

/** Log bytes waiting for a slow reader before lines are dropped instead (docs/operations.md, "Faults"). */
export const LOG_BUFFER_BYTES = 1024 * 1024;

/**
 * Where svc's JSON log lines go: never a reason for the service to stop. A reader that stops
 * reading (a full pipe) or goes away (EPIPE) costs log lines, counted, never a blocked event loop:
 * lines wait in memory up to `maxBuffered` bytes, then are dropped, and the next line that gets
 * through is preceded by one saying how many were lost. After a write error nothing more is
 * written.
 */
export class LogSink {
  dropped = 0;
  closed = false;

  constructor(
    private readonly out: Writable,
    private readonly maxBuffered = LOG_BUFFER_BYTES,
  ) {
    out.on('error', () => {
      this.closed = true;
    });
  }

  write(line: string): void {
    if (this.closed || this.out.destroyed) {
      this.closed = true;
      this.dropped++;
      return;
    }
    if (this.out.writableLength > this.maxBuffered) {
      this.dropped++;
      return;
    }
    if (this.dropped > 0) {
      this.out.write(`${JSON.stringify({ level: 40, time: Date.now(), dropped: this.dropped, msg: 'log lines dropped while the log output was not read' })}\n`);
      this.dropped = 0;
    }
    this.out.write(line);
  }
}

/**
 * Standard output as a non-blocking writer. Node writes to a pipe synchronously on Linux, so a
 * reader that stops reading would stop the whole process once the pipe is full; a socket opened
 * on the same descriptor writes through the event loop instead. Files and terminals do not fill
 * up that way and keep Node's own stream.
 */
export function stdoutSink(): LogSink {
  let out: Writable = process.stdout;
  try {
    const st = fs.fstatSync(1);
    if (st.isFIFO() || st.isSocket()) out = new net.Socket({ fd: 1, readable: false, writable: true });
  } catch {
    // No standard output to look at: Node's stream reports its own errors, caught below.
  }
  return new LogSink(out);
}
