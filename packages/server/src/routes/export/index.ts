import fs from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pipeline, type Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { Competition, EVENT_SCHEMA, Event, Play } from '@svc/schema';
import type { ExportCacheKey } from '../../export/cache.js';
import type { Exports } from '../../export/index.js';
import { acceptsGzip } from '../../export/encoding.js';
import { FORMATS } from '../../export/formats.js';
import { competitionSource, eventSource, playSource, type Serialize } from '../../export/sources.js';
import { NdjsonStream, type PageSource } from '../../export/stream.js';
import type { SlotCounter } from '../../bus/slots.js';
import type { ChangeFeed } from '../../changes/feed.js';
import { SvcError } from '../../domain/errors.js';
import type { Principal } from '../../domain/scopes.js';
import type { ExportRepo } from '../../store/events/export.js';
import type { CompetitionRepo } from '../../store/reference/competitions.js';
import { principal, type CompetitionDeps, type RoutePlugin } from '../types.js';
import { planExport, type ExportPlan } from './plan.js';
import { exportSchema } from './schema.js';

/**
 * What a refused export is told to wait: exports of a season take seconds, so a few seconds is a
 * fair first guess, and clients retry on it as on any 429 (docs/decisions.md "Export").
 */
export const EXPORT_RETRY_AFTER_S = 5;

/**
 * Takes one of the key's export slots (its plan's `concurrentExports`, across nodes), or refuses
 * with 429 `too_many_exports`. Resolves with the function that gives the slot back.
 */
async function takeExportSlot(slots: SlotCounter, p: Principal): Promise<() => void> {
  const limit = p.plan.concurrentExports;
  if (!Number.isFinite(limit)) return () => undefined;
  const token = await slots.acquire(p.keyId, limit);
  if (token === null) {
    throw new SvcError('too_many_exports', `This key already runs ${limit} export${limit === 1 ? '' : 's'} at once, the ${p.plan.name} plan's limit; retry when one ends.`, undefined, {
      'Retry-After': String(EXPORT_RETRY_AFTER_S),
    });
  }
  let given = false;
  return () => {
    if (given) return;
    given = true;
    void slots.release(p.keyId, token).catch(() => undefined);
  };
}

const RECORD_SCHEMA = { events: Event, plays: Play, competitions: Competition } as const;

function sourceFor(plan: ExportPlan, competitions: CompetitionRepo, repo: ExportRepo, excluded: ReadonlySet<string>, serialize: Serialize): PageSource {
  if (plan.entity === 'events') return eventSource(repo, plan.slice, plan.afterSeq, excluded);
  if (plan.entity === 'plays') return playSource(repo, plan.slice, plan.afterPlay, serialize);
  return competitionSource(competitions, plan.scope, plan.slice, plan.afterCompetition, serialize);
}

/**
 * The cache key when this export is a whole closed season's events (see ExportCache), else
 * null. `excluded`: the season's competitions the archive may not serve yet.
 */
async function cacheKeyOf(plan: ExportPlan, repo: ExportRepo, excluded: ReadonlySet<string>): Promise<ExportCacheKey | null> {
  const sl = plan.slice;
  if (plan.entity !== 'events' || excluded.size > 0 || plan.afterSeq !== 0 || sl.fromTs || sl.toTs || sl.fromDate || sl.toDate || sl.types) return null;
  const head = await repo.head(sl.seasonIds);
  // An event appended since the feed's position was read: this export stops before it, so its
  // bytes are not the season's at `head` and must not be kept as such.
  if (sl.throughSeq !== undefined && head > sl.throughSeq) return null;
  return { league: sl.league, seasonIds: sl.seasonIds, entity: 'events', head, schema: EVENT_SCHEMA };
}

export const exportRoutes: RoutePlugin<CompetitionDeps & { exports: Exports; exportSlots: SlotCounter; changes: ChangeFeed }> = async (app, deps) => {
  const { repo, cache, stats } = deps.exports;
  app.get('/export', { config: { product: 'archive' }, schema: exportSchema }, async (request, reply) => {
    const who = principal(request);
    const plan = await planExport(deps, repo, who, request.query);
    // Held from here until the response is done or its client is gone, whichever comes first.
    const giveBack = await takeExportSlot(deps.exportSlots, who);
    reply.raw.once('close', giveBack);
    try {
      return await sendExport(plan, who, request, reply);
    } catch (err) {
      giveBack();
      throw err;
    }
  });

  async function sendExport(plan: ExportPlan, who: Principal, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    // Read once: it decides the cache and filters the events (plays and competitions apply
    // eligibility per competition as they go).
    const excluded = plan.entity === 'events' ? await repo.excluded(plan.slice) : new Set<string>();
    // The change feed's position (docs/changes.md): every change after it is in the feed, and the
    // events exported stop where the feed takes over, so an export followed by the feed from
    // X-Changes-Cursor misses nothing and doubles nothing. The caller's own sandbox replays are
    // left out of the export like games still being played, and their events come from its feed;
    // another key's replays are not there for it at all, so they move nobody else's cursor.
    const leftOut = plan.entity === 'events' ? new Set([...excluded, ...(await repo.ownReplays(plan.slice, who.keyId))]) : excluded;
    const position = await deps.changes.position(leftOut.size > 0 ? (through) => repo.firstLeftOutEvent(leftOut, through) : undefined);
    plan.slice.throughSeq = position.eventSeq;
    reply.header('x-changes-cursor', position.cursor);
    const key = await cacheKeyOf(plan, repo, excluded);
    const format = FORMATS[plan.format];
    const failed = (err: NodeJS.ErrnoException | null) => {
      if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') request.log.warn({ err }, 'export stream failed');
    };
    const read = (file: string) => fs.createReadStream(file, { highWaterMark: 256 * 1024 });
    // The closed season in this format, kept from an earlier export: a file read.
    const formatKey = key && format.encoder ? { ...key, format: plan.format } : null;
    const cachedInFormat = formatKey ? cache.find(formatKey) : null;
    let body: Readable;
    if (cachedInFormat) {
      body = read(cachedInFormat);
      reply.header('x-svc-export-cache', 'hit');
    } else {
      const cached = key ? cache.find(key) : null;
      if (cached) {
        body = read(cached);
      } else {
        // The serializer Fastify compiled for this record schema, the one REST responses use.
        const serialize = reply.compileSerializationSchema(RECORD_SCHEMA[plan.entity]);
        const rows = new NdjsonStream(sourceFor(plan, deps.competitions, repo, excluded, serialize), repo.pageRows, stats);
        body = key ? pipeline(rows, cache.writer(key), () => undefined) : rows;
      }
      // CSV and Parquet are made from the NDJSON lines, cached or read (docs/decisions.md "Export
      // formats"), and kept too when the season is closed. pipeline() destroys the export when a
      // later stage is destroyed (client gone), and back.
      if (format.encoder) {
        body = pipeline(body, format.encoder(plan.entity), failed);
        if (formatKey) body = pipeline(body, cache.writer(formatKey), () => undefined);
      }
      if (key) reply.header('x-svc-export-cache', cached && !format.encoder ? 'hit' : 'miss');
    }
    reply
      .type(format.contentType)
      .header('content-disposition', `attachment; filename="${plan.filename}"`)
      .header('vary', 'Accept-Encoding');
    if (!format.gzip || !acceptsGzip(request.headers['accept-encoding'])) return reply.send(body);
    reply.header('content-encoding', 'gzip');
    return reply.send(pipeline(body, createGzip(), failed));
  }
};
