/**
 * Events in their forms: the full record (REST and export), the wire form (stream frames and
 * webhook bodies) and the webhook test event.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Competition, CompetitionStatusSchema, EVENT_SCHEMA } from './records.js';

export const Confidence = Type.Object(
  {
    agreement: Type.Number({ minimum: 0, maximum: 1 }),
    reporters: Type.Integer({ minimum: 0 }),
    latency_ms: Type.Integer({ minimum: 0 }),
    probability: Type.Number({
      minimum: 0,
      maximum: 1,
      description:
        'The calibrated chance that the play is real (3 decimals), from its reporters’ reliability and the silence of the game’s other reporters; 1 on official events. On a `score_retracted`: the probability of the event it withdraws, so a `min_probability` filter passes a retraction exactly when it passed that event.',
    }),
  },
  { additionalProperties: false },
);
export type Confidence = Static<typeof Confidence>;

/** The kinds of a scoring event. */
export const SCORE_EVENT_TYPES = ['score', 'score_retracted'] as const;
/**
 * Every event `type` svc emits: scoring events and `status` (a competition's status changed,
 * docs/schedule.md). Consumers ignore kinds they do not know.
 */
export const EVENT_TYPES = ['score', 'score_retracted', 'status'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const TIERS = ['provisional', 'confirmed'] as const;
export type Tier = (typeof TIERS)[number];

/**
 * The two kinds of `score_retracted` (docs/corrections.md), told apart by `tier`: a provisional
 * that was never confirmed is withdrawn by a `provisional` one (`event_type` `score_retracted`);
 * a confirmed score that turned out wrong is corrected by a `confirmed` one, whose `event_type`
 * says why: `score_withdrawn` (an official source withdrew it) or `final_contradicted` (the
 * official final score cannot hold it).
 */
export const CORRECTION_EVENT_TYPES = ['score_withdrawn', 'final_contradicted'] as const;
export type CorrectionEventType = (typeof CORRECTION_EVENT_TYPES)[number];

const RETRACTED_ID =
  'On `score_retracted`: the event withdrawn. Tier `provisional`: a provisional never confirmed; tier `confirmed`: a confirmed score corrected (docs/corrections.md).';

/** A scoring event as REST lists and the export return it: every field of svc.event.v1. */
export const ScoreEvent = Type.Object(
  {
    id: Type.String({ description: 'evt_<sortable id>' }),
    type: Type.Union(SCORE_EVENT_TYPES.map((t) => Type.Literal(t))),
    tier: Type.Union(TIERS.map((t) => Type.Literal(t))),
    game_id: Type.String(),
    sport: Type.String(),
    league: Type.String(),
    team: Type.String(),
    event_type: Type.String(),
    points: Type.Integer(),
    clock: Type.Union([Type.String(), Type.Null()]),
    ts: Type.String(),
    confidence: Confidence,
    provisional_id: Type.Optional(Type.String()),
    retracted_id: Type.Optional(Type.String({ description: RETRACTED_ID })),
    schema: Type.Literal(EVENT_SCHEMA),
  },
  { additionalProperties: false, title: 'ScoreEvent' },
);
export type ScoreEvent = Static<typeof ScoreEvent>;

/**
 * A competition's status changed (docs/schedule.md): the same form in REST lists, the export,
 * stream frames and webhook bodies. Always `confirmed`: an official source made the change.
 */
export const StatusEvent = Type.Object(
  {
    id: Type.String({ description: 'evt_<sortable id>' }),
    type: Type.Literal('status'),
    tier: Type.Literal('confirmed'),
    game_id: Type.String({ description: 'The game id (`<sport>_<n>`) of the competition.' }),
    sport: Type.String(),
    status: CompetitionStatusSchema,
    previous_status: CompetitionStatusSchema,
    start_time: Type.Union([Type.String(), Type.Null()], { description: 'The competition’s start time after the change (ISO 8601 UTC), null when unknown.' }),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why, as the source gave it; null when it gave none.' }),
    ts: Type.String({ description: 'When the change was made, ISO 8601 UTC.' }),
    schema: Type.Literal(EVENT_SCHEMA),
  },
  { additionalProperties: false, title: 'StatusEvent' },
);
export type StatusEvent = Static<typeof StatusEvent>;

/** An event as REST lists and the export return it: a scoring event or a status change, told apart by `type`. */
export const Event = Type.Union([ScoreEvent, StatusEvent]);
export type Event = Static<typeof Event>;

/** Whether an event is a scoring event (`score` or `score_retracted`). */
export const isScoreEvent = (e: Event): e is ScoreEvent => e.type !== 'status';

/**
 * The stream and webhook form of a scoring event: the spec's fields plus `id` (for resume and
 * dedup) and the additive links. Keys go on the wire in this order.
 */
export const WireScoreEvent = Type.Object(
  {
    id: ScoreEvent.properties.id,
    type: ScoreEvent.properties.type,
    tier: ScoreEvent.properties.tier,
    game_id: ScoreEvent.properties.game_id,
    team: ScoreEvent.properties.team,
    points: ScoreEvent.properties.points,
    ts: ScoreEvent.properties.ts,
    confidence: Confidence,
    provisional_id: Type.Optional(Type.String({ description: 'On a confirmed event: the provisional event it confirms.' })),
    retracted_id: Type.Optional(Type.String({ description: RETRACTED_ID })),
    schema: Type.Literal(EVENT_SCHEMA),
  },
  { additionalProperties: false, title: 'WireScoreEvent' },
);
export type WireScoreEvent = Static<typeof WireScoreEvent>;

/** What the stream and webhooks carry: a scoring event's wire form, or a status event whole. */
export const WireEvent = Type.Union([WireScoreEvent, StatusEvent]);
export type WireEvent = Static<typeof WireEvent>;

/** The stream and webhook form of an event (`WireEvent`), keys in wire order. */
export function wireEvent(e: Event): WireEvent {
  if (e.type === 'status') return e;
  return {
    id: e.id,
    type: e.type,
    tier: e.tier,
    game_id: e.game_id,
    team: e.team,
    points: e.points,
    ts: e.ts,
    confidence: e.confidence,
    ...(e.provisional_id !== undefined ? { provisional_id: e.provisional_id } : {}),
    ...(e.retracted_id !== undefined ? { retracted_id: e.retracted_id } : {}),
    schema: e.schema,
  };
}

/**
 * What `POST /v1/webhooks/{id}/test` sends: a signed event of the additive kind `test` (topic
 * `event.test`), outside the retry budget. Consumers that ignore unknown kinds ignore it.
 */
export const WebhookTestEvent = Type.Object(
  {
    id: Type.String({ description: 'Unique per test send; no stored event has it.' }),
    type: Type.Literal('test'),
    ts: Type.String({ description: 'When the test was sent, ISO 8601 UTC.' }),
    schema: Type.Literal(EVENT_SCHEMA),
  },
  { additionalProperties: false },
);
export type WebhookTestEvent = Static<typeof WebhookTestEvent>;

/** The JSON body of a webhook request. */
export const WebhookPayload = Type.Union([WireEvent, WebhookTestEvent]);
export type WebhookPayload = Static<typeof WebhookPayload>;

/** The `X-SVC-Topic` header of a webhook request: `event.<type>`. */
export const webhookTopic = (type: WebhookPayload['type']): string => `event.${type}`;

/**
 * One entry of the change feed `GET /v1/changes` (docs/changes.md): a competition created or
 * updated, or an event created, with the object as REST returns it now.
 */
export const Change = Type.Object(
  {
    id: Type.String({ description: 'chg_<sortable id>: the feed’s order, shared by every node.' }),
    type: Type.Union([Type.Literal('competition.created'), Type.Literal('competition.updated'), Type.Literal('event.created')]),
    object_id: Type.String({ description: 'The competition id or the event id.' }),
    object: Type.Union([Competition, ScoreEvent, StatusEvent], { description: 'The record as `GET /v1/competitions/{id}` or an event list returns it now.' }),
    at: Type.String({ description: 'When the change was made, ISO 8601 UTC.' }),
  },
  { additionalProperties: false, title: 'Change' },
);
export type Change = Static<typeof Change>;

/** The answer of `GET /v1/changes`: `next_cursor` is always present, even on an empty page. */
export const ChangePage = Type.Object(
  {
    data: Type.Array(Change),
    next_cursor: Type.String({ description: 'Pass back as `since`; present even on an empty page.' }),
  },
  { additionalProperties: false },
);
export type ChangePage = Static<typeof ChangePage>;
