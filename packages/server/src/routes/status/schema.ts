import { Type } from '@sinclair/typebox';
import { CHANNELS } from '../../status/service.js';

const Iso = Type.String({ description: 'ISO 8601 UTC timestamp.' });
const Fraction = Type.Number({ minimum: 0, maximum: 1 });

const SportStatus = Type.Object(
  {
    sport: Type.String(),
    status: Type.Union([Type.Literal('operational'), Type.Literal('idle'), Type.Literal('degraded')], {
      description: '`idle`: no live games; `operational`: live games with an event in the last 5 minutes; `degraded`: live games silent for 5 minutes.',
    }),
    live_games: Type.Integer(),
    events_last_5m: Type.Integer(),
    last_event_at: Type.Union([Iso, Type.Null()]),
    confirmation_p50_ms: Type.Union([Type.Integer(), Type.Null()]),
    uptime_90d: Type.Union([Fraction, Type.Null()], { description: 'Up minutes over expected minutes of the last 90 days (null before the first sample).' }),
    days: Type.Array(
      Type.Object(
        {
          date: Type.String({ description: 'YYYY-MM-DD (UTC).' }),
          uptime: Type.Union([Fraction, Type.Null()], { description: 'Fraction of the day\'s minutes up; null on a day without samples.' }),
        },
        { additionalProperties: false },
      ),
      { description: 'The last 90 days, oldest first, today last.' },
    ),
  },
  { additionalProperties: false },
);

const ChannelStatus = Type.Object(
  {
    channel: Type.Union(CHANNELS.map((c) => Type.Literal(c))),
    status: Type.Union([Type.Literal('operational'), Type.Literal('degraded')]),
  },
  { additionalProperties: false },
);

const Incident = Type.Object(
  {
    id: Type.String({ description: 'inc_…' }),
    sport: Type.Optional(Type.String({ description: 'Set on a feed incident.' })),
    channel: Type.Optional(Type.String({ description: 'Set on a channel incident.' })),
    title: Type.String(),
    started_at: Iso,
    resolved_at: Type.Union([Iso, Type.Null()], { description: 'null while the incident is open.' }),
  },
  { additionalProperties: false },
);

export const StatusBody = Type.Object({
  data: Type.Object(
    {
      status: Type.Union([Type.Literal('operational'), Type.Literal('degraded')]),
      generated_at: Iso,
      uptime_target: Type.String(),
      sports: Type.Array(SportStatus),
      channels: Type.Array(ChannelStatus),
      incidents: Type.Array(Incident, { description: 'Open incidents and those of the last 90 days, newest first (at most 50).' }),
    },
    { additionalProperties: false },
  ),
});

export const getStatus = {
  tags: ['status'],
  summary: 'Service health (public)',
  description:
    'Per-sport feed health, each channel\'s health (REST, stream, webhooks), 90 days of daily uptime per sport from the minute samples svc records itself, and incidents opened and resolved automatically. No key needed.',
  security: [],
  response: { 200: StatusBody },
};
