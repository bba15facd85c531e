import fs from 'node:fs/promises';
import { lineId, type Entity } from '../export/params.js';

export class ResumeError extends Error {}

const CHUNK = 64 * 1024;

/** Offset just past the last '\n' before `end`, or 0 when there is none. */
async function lineStartBefore(fh: fs.FileHandle, end: number): Promise<number> {
  const buf = Buffer.alloc(CHUNK);
  let pos = end;
  while (pos > 0) {
    const start = Math.max(0, pos - CHUNK);
    const { bytesRead } = await fh.read(buf, 0, pos - start, start);
    const nl = buf.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (nl >= 0) return start + nl + 1;
    pos = start;
  }
  return 0;
}

/**
 * Prepares an interrupted download for resuming: cuts a partial last line (a download stopped
 * mid-line) and returns the id of the last complete line, for the API's `after`. An empty file
 * (or one holding only part of its first line) starts over.
 */
export async function resumePoint(file: string, entity: Entity): Promise<{ after?: string; keptBytes: number }> {
  const fh = await fs.open(file, 'r+');
  try {
    const { size } = await fh.stat();
    const complete = await lineStartBefore(fh, size);
    if (complete < size) await fh.truncate(complete);
    if (complete === 0) return { keptBytes: 0 };
    const start = await lineStartBefore(fh, complete - 1);
    const line = Buffer.alloc(complete - 1 - start);
    await fh.read(line, 0, line.length, start);
    let record: unknown;
    try {
      record = JSON.parse(line.toString('utf8'));
    } catch {
      throw new ResumeError(`cannot resume ${file}: its last line is not JSON; delete the file or pass --after <id>`);
    }
    const id = typeof record === 'object' && record !== null ? lineId(entity, record) : undefined;
    if (id === undefined) throw new ResumeError(`cannot resume ${file}: its last line is not a ${entity} record; check --entity or pass --after <id>`);
    return { after: id, keptBytes: complete };
  } finally {
    await fh.close();
  }
}
