/**
 * Events in their forms: the full record (REST and export), the wire form (stream frames and
 * webhook bodies) and the webhook test event.
 */
import { Type, type Static } from '@sinclair/typebox';
import { EVENT_SCHEMA } from './records.js';

export const Confidence = Type.Object(
  {
    agreement: Type.Number({ minimum: 0, maximum: 1 }),
    reporters: Type.Integer({ minimum: 0 }),
    latency_ms: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type Confidence = Static<typeof Confidence>;

export const EVENT_TYPES = ['score', 'score_retracted'] as const;
export const TIERS = ['provisional', 'confirmed'] as const;
export type Tier = (typeof TIERS)[number];

/** An event as REST lists and the export return it: every field of svc.event.v1. */
export const Event = Type.Object(
  {
    id: Type.String({ description: 'evt_<sortable id>' }),
    type: Type.Union(EVENT_TYPES.map((t) => Type.Literal(t))),
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
    retracted_id: Type.Optional(Type.String()),
    schema: Type.Literal(EVENT_SCHEMA),
  },
  { additionalProperties: false },
);
export type Event = Static<typeof Event>;

/**
 * The stream and webhook form of an event: the spec's fields plus `id` (for resume and dedup)
 * and the additive links. Keys go on the wire in this order.
 */
export const WireEvent = Type.Object(
  {
    id: Event.properties.id,
    type: Event.properties.type,
    tier: Event.properties.tier,
    game_id: Event.properties.game_id,
    team: Event.properties.team,
    points: Event.properties.points,
    ts: Event.properties.ts,
    confidence: Confidence,
    provisional_id: Type.Optional(Type.String({ description: 'On a confirmed event: the provisional event it confirms.' })),
    retracted_id: Type.Optional(Type.String({ description: 'On `score_retracted`: the provisional event withdrawn.' })),
    schema: Type.Literal(EVENT_SCHEMA),
  },
  { additionalProperties: false },
);
export type WireEvent = Static<typeof WireEvent>;

/** The stream and webhook form of an event (`WireEvent`), keys in wire order. */
export function wireEvent(e: Event): WireEvent {
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
