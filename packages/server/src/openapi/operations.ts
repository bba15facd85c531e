/**
 * The name and words of every operation in the API description, in one table so the names stay
 * consistent (`list<Things>`, `get<Thing>`, `create<Thing>`, verbs for actions) and a client
 * generator gets the same method names as the hand-written clients. Keyed by method and the
 * OpenAPI path; a route missing here fails the OpenAPI test.
 */
export interface OperationDoc {
  operationId: string;
  description: string;
  /** The description of the success answer. */
  ok: string;
  /** Words for parameters whose schema has none (shared enums of @svc/schema), by name. */
  params?: Record<string, string>;
  /** Answers carry an `ETag` and honour `If-None-Match` with a 304 (http/etag.ts). */
  etag?: boolean;
}

/**
 * Words for query parameters shared by many operations, in place of the terse ones their
 * @svc/schema types carry; an operation's own `params` win over these.
 */
export const PARAMETER_WORDS: Record<string, string> = {
  sport: 'Only records of this sport: `soccer`, `basketball`, `tennis`, `golf` or `mma`.',
  team: 'Only records of this team, by id: `team:<league>:<code>` (e.g. `team:wc:ARG`).',
  player: 'Only records of this player, by id: `player:<league>:<slug>` (e.g. `player:wc:lionel-messi`).',
};

const COMPETITION_STATUS =
  'Only competitions of this status: `scheduled` (not started), `live` (started, not over), `final`, `postponed` (moved to a date not known yet), `suspended` (stopped while live) or `cancelled`.';
const TYPES = 'Comma list of event types: `score`, `score_retracted`, `status` (a competition’s status changed). Default: every type.';

const VIEWS = ' Any of the `live` or `archive` products; answers carry an `ETag`, and a request with `If-None-Match` naming it gets a 304 without a body.';

const PAGE = ' Lists are pages of `{data, next_cursor}`: pass `next_cursor` back as `cursor` until it is null. Filters are AND-ed; an unknown parameter is a 400.';

export const OPERATIONS: Record<string, OperationDoc> = {
  'GET /v1/status': {
    operationId: 'getStatus',
    description: 'Overall and per-sport feed health: live games, events in the last five minutes, confirmation latency. Public: no key needed, and it shows no data.',
    ok: 'The service’s current health.',
  },
  'GET /v1/me': {
    operationId: 'getMe',
    description: 'What the calling key may do: its plan, products, sport and league scope, rate limit and stream connection limit.',
    ok: 'The calling key.',
  },
  'GET /v1/teams': { operationId: 'listTeams', description: `Teams of the sports and leagues the key may see, by id.${PAGE}`, ok: 'A page of teams.' },
  'GET /v1/teams/{id}': { operationId: 'getTeam', description: 'One team by id (`team:<league>:<code>`).', ok: 'The team.' },
  'GET /v1/teams/{id}/roster': {
    operationId: 'listTeamRoster',
    description: `The players of a team, season by season (\`season\` narrows to one).${PAGE}`,
    ok: 'A page of roster entries.',
  },
  'GET /v1/players': {
    operationId: 'listPlayers',
    description: `Players; \`team\` and \`season\` filter through rosters, \`search\` matches names regardless of case and accents.${PAGE}`,
    ok: 'A page of players.',
  },
  'GET /v1/players/{id}': { operationId: 'getPlayer', description: 'One player by id (`player:<league>:<slug>`).', ok: 'The player.' },
  'GET /v1/venues': {
    operationId: 'listVenues',
    description: `Venues; \`sport\` and \`league\` keep those that host their competitions.${PAGE}`,
    ok: 'A page of venues.',
  },
  'GET /v1/venues/{id}': { operationId: 'getVenue', description: 'One venue by id.', ok: 'The venue.' },
  'GET /v1/seasons': {
    operationId: 'listSeasons',
    description: `Seasons per league with their date range, source and how many competitions and events the archive holds.${PAGE}`,
    ok: 'A page of seasons.',
  },
  'GET /v1/competitions': {
    operationId: 'listCompetitions',
    description: `Competitions of every sport (games, matches, rounds, bouts), oldest date first, with competitors and scores.${PAGE}`,
    ok: 'A page of competitions.',
    params: { status: COMPETITION_STATUS },
  },
  'GET /v1/competitions/{id}': { operationId: 'getCompetition', description: 'One competition by id (`<sport>_<league>_<n>`).', ok: 'The competition.' },
  'GET /v1/competitions/{id}/plays': {
    operationId: 'listCompetitionPlays',
    description: `The official play-by-play (svc.play.v1) of a competition in \`seq\` order. Past competitions need the \`archive\` product, today’s and live ones \`live\`.${PAGE}`,
    ok: 'A page of plays.',
  },
  'GET /v1/competitions/{id}/boxscore': {
    operationId: 'getCompetitionBoxScore',
    etag: true,
    description: 'The box score built from the official plays, updated with each play while the game is live: the line score by period (every period reached, 0 where a side scored nothing; a penalty shoot-out apart, as `shootout`), the players with their plays by type (own goals listed but not in `points`, credited to the other side), and the winner once final. Past competitions need the `archive` product, today’s and live ones `live`; answers carry an `ETag` and honour `If-None-Match`.',
    ok: 'The box score.',
  },
  'GET /v1/standings': {
    operationId: 'listStandings',
    etag: true,
    description: 'The standings of a league’s season (default: the current one): one table per group for a tournament’s group stage, one table (`group` null) otherwise. Soccer: points (3 a win, 1 a draw), goal difference, goals scored, then head-to-head points, difference and goals among teams still level, then `entity_id`. Basketball: pct, head-to-head pct, point difference, `entity_id`. Live games count at their current score in `tier` and mark their rows `live`; `live=false` counts finished games only. Tennis, golf and MMA: 400 `standings_unavailable`. Any of the `live` or `archive` products; answers carry an `ETag`, and a request with `If-None-Match` naming it gets a 304 without a body.',
    ok: 'The season’s tables.',
    params: {
      live: '`false` counts finished games only; by default live games count at their current score.',
      tier: 'Which events of live games count: `confirmed` (default) or `provisional`.',
      league: 'The league, e.g. `wc`.',
      season: 'Season label (`2022`) or id (`wc_2022`); default the league’s current season.',
    },
  },
  'GET /v1/leaders': {
    operationId: 'listLeaders',
    etag: true,
    description: `A season’s players ranked by \`stat\` (soccer default \`goals\`: goals and penalty goals, own goals and shoot-out kicks not counted; basketball default \`points\`; any event type, e.g. \`own_goal\` or \`three_pointer\`, counts those plays), value descending; ties share a rank and are ordered by \`player_id\`.${VIEWS}${PAGE}`,
    ok: 'A page of leaders.',
    params: {
      league: 'The league, e.g. `wc`.',
      season: 'Season label (`2022`) or id (`wc_2022`); default the league’s current season.',
      stat: '`goals`, `points` or an event type; default the sport’s scoring stat.',
    },
  },
  'GET /v1/players/{id}/stats': {
    operationId: 'getPlayerStats',
    etag: true,
    description: `A player’s totals, one per season the player has plays in: points for the player’s side (own goals and shoot-out kicks left out) and plays by type.${PAGE}`,
    ok: 'A page of season totals.',
    params: { season: 'Only this season: label (`2022`) or id (`wc_2022`).' },
  },
  'POST /v1/competitions/{id}/plays': {
    operationId: 'createPlays',
    description:
      'Appends official plays (product `source`), one or `{"plays": [...]}` up to 500. The first play moves the competition from scheduled to live, a play of `event_type` `final` ends it; an official scoring play confirms the matching crowd candidate at once. The final play also withdraws the confirmed crowd scores its score cannot hold. **Corrections** (docs/corrections.md): `{"event_type": "score_withdrawn", "withdraws": "<play seq or event id>"}` (posted on its own; `period`, `competitor_id` and `points` optional) withdraws a confirmed score, crowd or official: a confirmed `score_retracted` event naming it in `retracted_id` follows on the stream, to webhooks, in the game’s events, the export and the change feed, and the score, box score, standings and leaders move back. Refusals: 400 `withdraws_unknown`, `withdraws_other_game`, `withdraws_not_a_score`, `withdrawal_not_alone`, `missing_field` (`withdraws`); 409 `already_withdrawn`, `competition_final`.',
    ok: 'The plays as stored, with their `seq` and running `state` (the score after the play); a correction with `withdraws`, `retracted_id` and the withdrawn points as negative `points`.',
  },
  'POST /v1/competitions/{id}/status': {
    operationId: 'changeCompetitionStatus',
    description:
      'Moves a competition through the schedule lifecycle (product `source`): scheduled → live | postponed | cancelled; live → final | suspended; suspended → live | final | cancelled; postponed → scheduled (with its new `start_time`) | cancelled. Any other move is 409 `invalid_transition`; the status it already has is a 200 that changes and emits nothing, unless it brings another `start_time`, which moves the start (a `status` event whose `status` is its `previous_status`). `original_start_time` keeps the first announced start once it moves, `status_reason` the `reason`. Each change is a `status` event on the stream, to webhooks, in the game’s events, the export and the change feed. Reports to a postponed or cancelled game are 409 `game_not_live`.',
    ok: 'The competition after the change.',
  },
  'GET /v1/changes': {
    operationId: 'listChanges',
    description:
      'The change feed: `competition.created`, `competition.updated` (status, score, start time) and `event.created`, each with its object as REST returns it now, in one order shared by every node (`chg_…` ids). `next_cursor` is always present: poll with it as `since`, or start from an export’s `X-Changes-Cursor` to keep a mirror exact. `wait` (0–30 s) holds an empty answer until a change arrives. Without `since` the feed starts at the oldest change kept (30 days by default); an older cursor is 410 `cursor_expired`. Products: `live` or `archive`; scoped to the key’s sports and leagues.',
    ok: 'A page of changes and the cursor to poll with next.',
    params: {
      since: 'The `next_cursor` of the previous answer or an export’s `X-Changes-Cursor`; without it the feed starts at the oldest change kept.',
      limit: 'Most changes per answer, 1..1000 (default 100).',
      types: 'Comma list of change types: `competition.created`, `competition.updated`, `event.created`. Default: all.',
      wait: 'Seconds (0–30, default 0) to hold an empty answer until a change arrives.',
    },
  },
  'GET /v1/games': {
    operationId: 'listGames',
    description: `Team-sport competitions as games (id \`<sport>_<n>\`), with status and which products serve their events.${PAGE}`,
    ok: 'A page of games.',
    params: { sport: 'Only games of this sport: `soccer` or `basketball` (the team sports).', status: COMPETITION_STATUS.replace('competitions', 'games') },
  },
  'GET /v1/games/{id}': { operationId: 'getGame', description: 'One game by game id (`<sport>_<n>`).', ok: 'The game.' },
  'GET /v1/games/{id}/events': {
    operationId: 'listGameEvents',
    description: `Confirmed events (svc.event.v1) of a game in order: scoring events and \`status\` changes (\`types\` narrows). Past games need the \`archive\` product, today’s and live ones \`live\`.${PAGE}`,
    ok: 'A page of events.',
    params: { types: TYPES },
  },
  'POST /v1/reports': {
    operationId: 'createReports',
    description:
      'Crowd reports of scoring plays (product `report`), one or `{"reports": [...]}` up to 500. Each joins or opens a candidate; the first report of a candidate emits a provisional event at once when its voter may publish alone (the key’s own voice, or a `reporter` with a record of its own). `reporter` (1–128 characters, opaque) names the end user a report comes from, so one key reports for many people: each is weighed on its own track record, and a key’s reporters without a record count together as one newcomer. A voice has at most 2 open candidates nobody else backs per game; past that its reports are stored and start nothing (`event_id` null). `ref` makes a report idempotent per key. Consensus rules and the threat model: docs/consensus.md.',
    ok: 'One result per report, in order: the report id, the event it joined and that event’s tier.',
  },
  'POST /v1/webhooks': {
    operationId: 'createWebhook',
    description:
      'Registers an https endpoint for confirmed events (optionally of some sports, of some `types`: `score`, `status`, and at or above `min_probability`: events whose `confidence.probability` is lower are not delivered). The answer carries the signing secret (`whsec_…`); it is never shown again. Deliveries are signed with `X-SVC-Signature` (see the `webhooks` section).',
    ok: 'The endpoint with its signing secret.',
  },
  'GET /v1/webhooks': { operationId: 'listWebhooks', description: `Webhook endpoints of the calling key, oldest first; secrets are never listed.${PAGE}`, ok: 'A page of endpoints.' },
  'GET /v1/webhooks/{id}': { operationId: 'getWebhook', description: 'One webhook endpoint of the calling key.', ok: 'The endpoint.' },
  'PATCH /v1/webhooks/{id}': {
    operationId: 'updateWebhook',
    description: 'Changes the url, sports (null: every sport in scope), event types (`types`, null: all), `min_probability` or description of an endpoint.',
    ok: 'The endpoint as changed.',
  },
  'DELETE /v1/webhooks/{id}': { operationId: 'deleteWebhook', description: 'Deletes an endpoint and its deliveries; pending deliveries are not sent.', ok: 'The id of the deleted endpoint.' },
  'GET /v1/webhooks/{id}/deliveries': {
    operationId: 'listWebhookDeliveries',
    description: `Deliveries of an endpoint, newest first, optionally of one status.${PAGE}`,
    ok: 'A page of deliveries.',
    params: { status: 'Only deliveries of this status: `pending` (waiting for an attempt), `delivered`, `failed` (attempts used up) or `disabled` (the endpoint was disabled first).' },
  },
  'GET /v1/webhooks/{id}/deliveries/{delivery_id}': {
    operationId: 'getWebhookDelivery',
    description: 'One delivery with its attempt log: status code, duration and an excerpt of each answer.',
    ok: 'The delivery and its attempts.',
  },
  'POST /v1/webhooks/{id}/replay': {
    operationId: 'replayWebhook',
    description:
      'Sends events again as new deliveries: one delivery (`{"delivery_id"}`) or every event in a time range (`{"from", "to"}`, at most 30 days back and 10,000 events). The endpoint must be enabled.',
    ok: 'How many deliveries were created, and their ids.',
  },
  'POST /v1/webhooks/{id}/enable': {
    operationId: 'enableWebhook',
    description: 'Re-enables an endpoint that was disabled (24 h of failures, or a 410 from the receiver). Deliveries disabled with it stay disabled; replay them if needed.',
    ok: 'The endpoint, enabled.',
  },
  'POST /v1/webhooks/{id}/rotate-secret': {
    operationId: 'rotateWebhookSecret',
    description: 'Issues a new signing secret. For 24 h the old secret keeps signing beside the new one (two `v1=` in `X-SVC-Signature`), so receivers can switch without losing a delivery.',
    ok: 'The endpoint with its new secret (shown only here).',
  },
  'POST /v1/webhooks/{id}/test': {
    operationId: 'testWebhook',
    description: 'Sends one signed event of type `test` (topic `event.test`) to the endpoint now, outside the retry budget, and answers how the receiver replied.',
    ok: 'The outcome of the test send.',
  },
  'GET /v1/notifications': {
    operationId: 'listNotifications',
    description: `Notices for the calling key, newest first, e.g. that a webhook endpoint was disabled and why.${PAGE}`,
    ok: 'A page of notifications.',
  },
  'POST /v1/stream/tokens': {
    operationId: 'createStreamToken',
    description:
      'Mints a short-lived token for `GET /v1/stream` (WebSocket or `Accept: text/event-stream`), so a public web page can open the stream without holding an API key: your back end calls this with its key and hands the page the token, which the page passes as `?token=sst_…`. The token lives `ttl_s` seconds (60–86,400, default 3,600); `sports`, `leagues` and `games` narrow it (each list it names applies; it is never wider than the key: a name outside the key’s scope is a 403 `sport_not_in_scope`). It authenticates the stream only (any other endpoint answers 401), counts against the key’s stream connections and rate limit, and ends with its key: a revoked key’s tokens are refused with 401 `invalid_api_key` and their open streams closed; an expired one is 401 `token_expired` and its open streams end at `expires_at`. Product `live`.',
    ok: 'The token, shown only here.',
  },
  'POST /v1/replays': {
    operationId: 'createReplay',
    description:
      'Replays a final soccer or basketball game through the live pipeline as a new game of its own (`game_id`, `<sport>_<number>`), for testing stream consumers and webhook receivers: its plays come in the source’s order with their gaps divided by `speed` (1–600, default 60), each scoring play as a provisional then a confirmed event through the consensus, the stream and the webhooks, then the game goes final. The replay’s game and events exist for the calling key alone: every other key gets 404s, no frames and no deliveries. Sandbox keys (`svc_test_…`) only: a production key gets 403 `sandbox_only`. At most 5 scheduled or running replays per key (409 `replay_limit`). An unknown game is a 400 `unknown_game` (param `game_id`), a game not final a 409 `game_not_final`.',
    ok: 'The replay, `scheduled`; it runs within a second.',
  },
  'GET /v1/replays': { operationId: 'listReplays', description: `Replays of the calling key, newest first, whatever their status.${PAGE}`, ok: 'A page of replays.' },
  'GET /v1/replays/{id}': { operationId: 'getReplay', description: 'One replay of the calling key with its status: `scheduled`, `running`, `finished` or `cancelled` (with a `reason`).', ok: 'The replay.' },
  'DELETE /v1/replays/{id}': {
    operationId: 'cancelReplay',
    description: 'Cancels a replay: nothing more is played and its game ends at once with a `final` play. A replay already over is answered as it is.',
    ok: 'The replay, `cancelled` (or as it already was).',
  },
  'GET /v1/reporters': {
    operationId: 'listReporters',
    description: `The crowd as an operator sees it (product \`admin\`): every voter with a track record, an API key’s own voice (\`reporter\` null) and each end user a key named in a report’s \`reporter\`, in key order. \`weight\` is what its next vote weighs; \`flagged\` follows the documented rule (docs/reporters.md): official contradictions, repeated retractions, or far more reports than its games had plays. \`key\` narrows to one API key’s voters; \`flagged\` and \`suspended\` (\`true\` or \`false\`) to those marked or not.${PAGE}`,
    ok: 'A page of reporters.',
  },
  'POST /v1/reporters/{id}/suspend': {
    operationId: 'suspendReporter',
    description:
      'Suspends a reporter (product `admin`): from now on its reports are answered 202 and stored but start and join nothing (`event_id` null), on every node. Its votes on open candidates are withdrawn at once, each on the node running its game’s consensus, and those candidates judged again without them: one left without a vote is retracted, one that still has a quorum and the agreement may be confirmed. Confirmed and retracted plays stay as they were. Suspending a suspended reporter changes nothing; an id that names no reporter with a stored report or track record is a 404 `resource_not_found`.',
    ok: 'The reporter, `suspended`.',
  },
  'POST /v1/reporters/{id}/restore': {
    operationId: 'restoreReporter',
    description: 'Lifts a suspension (product `admin`): the reporter’s next reports count again, on every node within a second. The votes its suspension withdrew stay withdrawn. Restoring a reporter that is not suspended changes nothing; an unknown id is a 404 `resource_not_found`.',
    ok: 'The reporter, not suspended.',
  },
  'GET /v1/export': {
    operationId: 'exportRecords',
    description:
      'Streams a season as newline-delimited JSON (product `archive`): events (default), plays or competitions, each line byte for byte the JSON of the matching REST list. `from` (inclusive) and `to` (exclusive) bound the records’ time; after an interruption pass the last id received as `after`. Gzip when asked with `Accept-Encoding: gzip`. `format=csv` (RFC 4180, a header row, nested fields as dotted columns) or `format=parquet` (typed columns, UTC timestamps, row groups) writes the same rows for pandas, polars and DuckDB.',
    ok: 'One JSON record per line (or the CSV or Parquet file), streamed.',
    params: { types: TYPES },
  },
};
