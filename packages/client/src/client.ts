import type { APIPromise } from './api-promise.js';
import { APIClient, type ClientOptions, type FinalRequest, type Query, type RequestOptions } from './core.js';
import { PermissionDeniedError } from './errors.js';
import { ExportIterable, exportBytes, exportRecords, type ExportRecord } from './export.js';
import { PagePromise, type ListEnvelope } from './pagination.js';
import type {
  BoxScore,
  Leader,
  LeadersQuery,
  PlayerSeasonStats,
  PlayerStatsQuery,
  Standings,
  StandingsQuery,
  Competition,
  CreateReplayInput,
  CreateStreamTokenBody,
  StreamToken,
  CreateWebhookInput,
  DeletedWebhook,
  Event,
  ExportEntity,
  ExportQuery,
  Game,
  GameEventsQuery,
  ListCompetitionsQuery,
  ListDeliveriesQuery,
  ListGamesQuery,
  ListPlayersQuery,
  ListSeasonsQuery,
  ListTeamsQuery,
  ListVenuesQuery,
  Me,
  Notification,
  PageQuery,
  Play,
  PlayInput,
  PlayWithdrawalInput,
  Player,
  Replay,
  ReplayInput,
  Reporter,
  ListReportersQuery,
  ReplayResult,
  ReportInput,
  ReportResult,
  RosterEntry,
  RosterQuery,
  Season,
  StatusChangeInput,
  Team,
  UpdateWebhookInput,
  Venue,
  WebhookDelivery,
  WebhookDeliveryWithAttempts,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookTestResult,
} from './schema.js';
import { EventStream, type StreamOptions, type StreamParams, type StreamTokenSource } from './stream.js';
import { Changes } from './changes.js';

const seg = (id: string): string => encodeURIComponent(id);

abstract class Resource {
  protected readonly client: APIClient;
  constructor(client: APIClient) {
    this.client = client;
  }

  protected paged<T>(path: string, params: Query | undefined, options: RequestOptions | undefined): PagePromise<T> {
    return new PagePromise<T>((cursor) =>
      this.client.json<ListEnvelope<T>>({ method: 'GET', path, query: cursor === undefined ? params : { ...params, cursor }, options }),
    );
  }

  protected one<T>(req: FinalRequest): APIPromise<T> {
    return this.client.data<T>(req);
  }
}

export class Teams extends Resource {
  list(params: ListTeamsQuery = {}, options?: RequestOptions): PagePromise<Team> {
    return this.paged('/v1/teams', params, options);
  }
  get(id: string, options?: RequestOptions): APIPromise<Team> {
    return this.one({ method: 'GET', path: `/v1/teams/${seg(id)}`, options });
  }
  /** The team's season-scoped roster. */
  roster(id: string, params: RosterQuery = {}, options?: RequestOptions): PagePromise<RosterEntry> {
    return this.paged(`/v1/teams/${seg(id)}/roster`, params, options);
  }
}

export class Players extends Resource {
  list(params: ListPlayersQuery = {}, options?: RequestOptions): PagePromise<Player> {
    return this.paged('/v1/players', params, options);
  }
  get(id: string, options?: RequestOptions): APIPromise<Player> {
    return this.one({ method: 'GET', path: `/v1/players/${seg(id)}`, options });
  }
  /** The player's totals, one per season the player has plays in (docs/standings.md). */
  stats(id: string, params: PlayerStatsQuery = {}, options?: RequestOptions): PagePromise<PlayerSeasonStats> {
    return this.paged(`/v1/players/${seg(id)}/stats`, params, options);
  }
}

export class Venues extends Resource {
  list(params: ListVenuesQuery = {}, options?: RequestOptions): PagePromise<Venue> {
    return this.paged('/v1/venues', params, options);
  }
  get(id: string, options?: RequestOptions): APIPromise<Venue> {
    return this.one({ method: 'GET', path: `/v1/venues/${seg(id)}`, options });
  }
}

export class Seasons extends Resource {
  list(params: ListSeasonsQuery = {}, options?: RequestOptions): PagePromise<Season> {
    return this.paged('/v1/seasons', params, options);
  }
}

export class Competitions extends Resource {
  list(params: ListCompetitionsQuery = {}, options?: RequestOptions): PagePromise<Competition> {
    return this.paged('/v1/competitions', params, options);
  }
  get(id: string, options?: RequestOptions): APIPromise<Competition> {
    return this.one({ method: 'GET', path: `/v1/competitions/${seg(id)}`, options });
  }
  /** Official play-by-play (svc.play.v1). */
  plays(id: string, params: PageQuery = {}, options?: RequestOptions): PagePromise<Play> {
    return this.paged(`/v1/competitions/${seg(id)}/plays`, params, options);
  }
  /**
   * Moves a competition through the schedule lifecycle (product `source`): postpone, suspend,
   * cancel, resume, schedule again with a new `start_time`. The same status again changes nothing.
   */
  changeStatus(id: string, body: StatusChangeInput, options?: RequestOptions): APIPromise<Competition> {
    return this.one({ method: 'POST', path: `/v1/competitions/${seg(id)}/status`, body, options });
  }
  /** The box score: line score by period, shoot-out, players by type, winner (docs/standings.md). */
  boxscore(id: string, options?: RequestOptions): APIPromise<BoxScore> {
    return this.one({ method: 'GET', path: `/v1/competitions/${seg(id)}/boxscore`, options });
  }
}

export class StandingsResource extends Resource {
  /** A season's tables (`{data: [{group, rows}], as_of}`): one per group, live games at their current score. */
  list(params: StandingsQuery, options?: RequestOptions): APIPromise<Standings> {
    return this.client.json<Standings>({ method: 'GET', path: '/v1/standings', query: params, options });
  }
}

export class Leaders extends Resource {
  /** A season's players ranked by `stat` (soccer `goals`, basketball `points` by default). */
  list(params: LeadersQuery, options?: RequestOptions): PagePromise<Leader> {
    return this.paged('/v1/leaders', params, options);
  }
}

export class Games extends Resource {
  list(params: ListGamesQuery = {}, options?: RequestOptions): PagePromise<Game> {
    return this.paged('/v1/games', params, options);
  }
  get(id: string, options?: RequestOptions): APIPromise<Game> {
    return this.one({ method: 'GET', path: `/v1/games/${seg(id)}`, options });
  }
  /** Confirmed events (svc.event.v1) of a game: scoring events and `status` changes; `types` narrows. */
  events(gameId: string, params: GameEventsQuery = {}, options?: RequestOptions): PagePromise<Event> {
    return this.paged(`/v1/games/${seg(gameId)}/events`, params, options);
  }
}

export class Reports extends Resource {
  /** One crowd report, or a batch of up to 500 (one bad report rejects the batch). */
  create(report: ReportInput, options?: RequestOptions): APIPromise<ReportResult>;
  create(reports: readonly ReportInput[], options?: RequestOptions): APIPromise<ReportResult[]>;
  create(input: ReportInput | readonly ReportInput[], options?: RequestOptions): APIPromise<ReportResult | ReportResult[]> {
    const batch = isList(input);
    return this.one<ReportResult[]>({ method: 'POST', path: '/v1/reports', body: batch ? { reports: input } : input, options }).map((data) => (batch ? data : data[0]));
  }
}

export class Plays extends Resource {
  /** Official plays for a competition (product `source`): one, or a batch of up to 500; one correction (`score_withdrawn`) on its own. */
  create(competitionId: string, play: PlayInput | PlayWithdrawalInput, options?: RequestOptions): APIPromise<Play>;
  create(competitionId: string, plays: readonly PlayInput[], options?: RequestOptions): APIPromise<Play[]>;
  create(competitionId: string, input: PlayInput | PlayWithdrawalInput | readonly PlayInput[], options?: RequestOptions): APIPromise<Play | Play[]> {
    const batch = isList(input);
    return this.one<Play[]>({ method: 'POST', path: `/v1/competitions/${seg(competitionId)}/plays`, body: batch ? { plays: input } : input, options }).map((data) => (batch ? data : data[0]));
  }

  /**
   * Withdraws a confirmed score, crowd or official (a goal disallowed after review; docs/corrections.md):
   * `withdraws` names its play (`seq`) or its event (`evt_…`). Returns the correction's play; a
   * `score_retracted` event naming the score follows on the stream, webhooks and the change feed.
   */
  withdraw(competitionId: string, input: Omit<PlayWithdrawalInput, 'event_type'>, options?: RequestOptions): APIPromise<Play> {
    return this.create(competitionId, { ...input, event_type: 'score_withdrawn' }, options);
  }
}

function isList<T extends object>(input: T | readonly T[]): input is readonly T[] {
  return Array.isArray(input);
}

export class Webhooks extends Resource {
  /** The answer carries the endpoint's signing `secret`, shown only here. */
  create(body: CreateWebhookInput, options?: RequestOptions): APIPromise<WebhookEndpointWithSecret> {
    return this.one({ method: 'POST', path: '/v1/webhooks', body, options });
  }
  list(params: PageQuery = {}, options?: RequestOptions): PagePromise<WebhookEndpoint> {
    return this.paged('/v1/webhooks', params, options);
  }
  get(id: string, options?: RequestOptions): APIPromise<WebhookEndpoint> {
    return this.one({ method: 'GET', path: `/v1/webhooks/${seg(id)}`, options });
  }
  update(id: string, body: UpdateWebhookInput, options?: RequestOptions): APIPromise<WebhookEndpoint> {
    return this.one({ method: 'PATCH', path: `/v1/webhooks/${seg(id)}`, body, options });
  }
  delete(id: string, options?: RequestOptions): APIPromise<DeletedWebhook> {
    return this.one({ method: 'DELETE', path: `/v1/webhooks/${seg(id)}`, options });
  }
  /** Deliveries of an endpoint, newest first. */
  deliveries(id: string, params: ListDeliveriesQuery = {}, options?: RequestOptions): PagePromise<WebhookDelivery> {
    return this.paged(`/v1/webhooks/${seg(id)}/deliveries`, params, options);
  }
  /** One delivery with its attempt log. */
  delivery(id: string, deliveryId: string, options?: RequestOptions): APIPromise<WebhookDeliveryWithAttempts> {
    return this.one({ method: 'GET', path: `/v1/webhooks/${seg(id)}/deliveries/${seg(deliveryId)}`, options });
  }
  /** Replays one delivery (`{delivery_id}`) or every event of a time range (`{from, to}`) as new deliveries. */
  replay(id: string, body: ReplayInput, options?: RequestOptions): APIPromise<ReplayResult> {
    return this.one({ method: 'POST', path: `/v1/webhooks/${seg(id)}/replay`, body, options });
  }
  /** Re-enables a disabled endpoint. */
  enable(id: string, options?: RequestOptions): APIPromise<WebhookEndpoint> {
    return this.one({ method: 'POST', path: `/v1/webhooks/${seg(id)}/enable`, options });
  }
  /** A new secret; the old one keeps signing beside it for 24 h. */
  rotateSecret(id: string, options?: RequestOptions): APIPromise<WebhookEndpointWithSecret> {
    return this.one({ method: 'POST', path: `/v1/webhooks/${seg(id)}/rotate-secret`, options });
  }
  /** Sends a signed `type: "test"` event to the endpoint now, outside the retry budget. */
  test(id: string, options?: RequestOptions): APIPromise<WebhookTestResult> {
    return this.one({ method: 'POST', path: `/v1/webhooks/${seg(id)}/test`, options });
  }
}

/**
 * Sandbox replays (sandbox keys only): a final game played again through the live pipeline as a
 * game of its own that only the calling key sees, its events on the key's stream and webhooks.
 */
export class Replays extends Resource {
  /** Starts a replay of a final game (`speed` 1–600, default 60); it is `scheduled`, then runs within a second. */
  create(body: CreateReplayInput, options?: RequestOptions): APIPromise<Replay> {
    return this.one({ method: 'POST', path: '/v1/replays', body, options });
  }
  /** The key's replays, newest first. */
  list(params: PageQuery = {}, options?: RequestOptions): PagePromise<Replay> {
    return this.paged('/v1/replays', params, options);
  }
  get(id: string, options?: RequestOptions): APIPromise<Replay> {
    return this.one({ method: 'GET', path: `/v1/replays/${seg(id)}`, options });
  }
  /** Cancels a replay; its game ends at once. A replay already over comes back as it is. */
  cancel(id: string, options?: RequestOptions): APIPromise<Replay> {
    return this.one({ method: 'DELETE', path: `/v1/replays/${seg(id)}`, options });
  }
}

/**
 * The operator's view of the crowd (product `admin`, docs/reporters.md): every voter's track
 * record, weight and flag; suspend and restore.
 */
export class Reporters extends Resource {
  /** Voters in key order; `key`, `flagged` and `suspended` (`'true'` / `'false'`) narrow the list. */
  list(params: ListReportersQuery = {}, options?: RequestOptions): PagePromise<Reporter> {
    return this.paged('/v1/reporters', params, options);
  }
  /** Its reports are stored but count for nothing from now on; its votes on open plays are withdrawn at once, on every node. */
  suspend(id: string, options?: RequestOptions): APIPromise<Reporter> {
    return this.one({ method: 'POST', path: `/v1/reporters/${seg(id)}/suspend`, options });
  }
  /** Its next reports count again; votes its suspension withdrew stay withdrawn. */
  restore(id: string, options?: RequestOptions): APIPromise<Reporter> {
    return this.one({ method: 'POST', path: `/v1/reporters/${seg(id)}/restore`, options });
  }
}

/** Stream tokens: what a back end mints so a public page can open the stream without a key (docs/stream.md). */
export class StreamTokens extends Resource {
  /**
   * A token for `GET /v1/stream` only (`ttl_s` 60–86,400, default 3,600), narrowed to `sports`,
   * `leagues` and `games` when given, never wider than the key. Hand `token` to the page.
   */
  create(body: CreateStreamTokenBody = {}, options?: RequestOptions): APIPromise<StreamToken> {
    return this.one({ method: 'POST', path: '/v1/stream/tokens', body, options });
  }
}

/** `svc.stream(params)` opens the live stream; `svc.stream.tokens` mints tokens for pages. */
export interface StreamAccess {
  (params?: StreamParams, options?: StreamOptions): EventStream;
  readonly tokens: StreamTokens;
}

/**
 * The live stream for a page that holds no API key, only a stream token (or a function that fetches
 * one from its back end): `connectStream({ baseUrl, token }, { game: 'soccer_1' })`, over a
 * WebSocket or, with `transport: 'sse'`, server-sent events.
 */
export function connectStream(options: StreamOptions & { baseUrl: string; token: StreamTokenSource }, params: StreamParams = {}): EventStream {
  return new EventStream({ baseUrl: options.baseUrl.replace(/\/+$/, ''), probeAccess: async () => undefined }, params, options);
}

export class Notifications extends Resource {
  /** Notices for the key (e.g. an endpoint was disabled), newest first. */
  list(params: PageQuery = {}, options?: RequestOptions): PagePromise<Notification> {
    return this.paged('/v1/notifications', params, options);
  }
}

/**
 * The svc API. `new Svc()` reads `SVC_API_KEY` and `SVC_BASE_URL`; records, params and events
 * keep the API's snake_case, options are camelCase.
 */
export class Svc extends APIClient {
  readonly teams = new Teams(this);
  readonly players = new Players(this);
  readonly venues = new Venues(this);
  readonly seasons = new Seasons(this);
  readonly competitions = new Competitions(this);
  readonly games = new Games(this);
  readonly standings = new StandingsResource(this);
  readonly leaders = new Leaders(this);
  readonly reports = new Reports(this);
  readonly plays = new Plays(this);
  readonly webhooks = new Webhooks(this);
  readonly notifications = new Notifications(this);
  readonly replays = new Replays(this);
  /** Reporters' track records, flags and suspensions (product `admin`). */
  readonly reporters = new Reporters(this);
  /** The change feed (docs/changes.md): `list()` and `follow()`. */
  readonly changes = new Changes(this);

  constructor(opts: ClientOptions = {}) {
    super(opts);
  }

  /** The calling key: plan, products, sports, limits. */
  me(options?: RequestOptions): APIPromise<Me> {
    return this.data({ method: 'GET', path: '/v1/me', options });
  }

  /**
   * A season's records as NDJSON, one typed record at a time (product `archive`); resumes with
   * `after=<last id>` by itself when the connection drops.
   */
  export<E extends ExportEntity = 'events'>(params: ExportQuery & { entity?: E; format?: 'ndjson' }, options?: RequestOptions): ExportIterable<ExportRecord[E]>;
  /**
   * `format: 'csv' | 'parquet'`: the file's bytes, chunk by chunk, to write to a file pandas,
   * polars or DuckDB open; the same rows and values as the records. A file is not resumed
   * part-way: a dropped connection throws `APIConnectionError`.
   */
  export(params: ExportQuery & { format: 'csv' | 'parquet' }, options?: RequestOptions): AsyncIterable<Uint8Array>;
  export(params: ExportQuery, options?: RequestOptions): ExportIterable<ExportRecord[ExportEntity]> | AsyncIterable<Uint8Array> {
    if (params.format === 'csv' || params.format === 'parquet') return exportBytes(this, params, options);
    return new ExportIterable((onCursor) => exportRecords(this, params, options, onCursor));
  }

  /**
   * Live events (product `live`): `for await (const ev of svc.stream({...}))`, then `close()`.
   * `svc.stream.tokens.create()` mints a stream token for a browser page.
   */
  readonly stream: StreamAccess = Object.assign((params: StreamParams = {}, options: StreamOptions = {}) => this.openStream(params, options), {
    tokens: new StreamTokens(this),
  });

  private openStream(params: StreamParams, options: StreamOptions): EventStream {
    return new EventStream(
      {
        apiKey: this.apiKey,
        baseUrl: this.baseUrl,
        probeAccess: async () => {
          const me = await this.me({ maxRetries: 0 });
          if (!me.products.includes('live')) {
            throw new PermissionDeniedError(403, { type: 'permission_error', code: 'product_not_in_plan', message: 'The key does not include the live product.' }, undefined, {});
          }
        },
      },
      params,
      options,
    );
  }
}
