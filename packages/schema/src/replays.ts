/** Sandbox replays: a finished game played again through the live pipeline, for one key alone. */
import { Type, type Static } from '@sinclair/typebox';

export const REPLAY_STATUSES = ['scheduled', 'running', 'finished', 'cancelled'] as const;
export type ReplayStatus = (typeof REPLAY_STATUSES)[number];
/** Speeds a replay takes: game time runs this many times faster than real time. */
export const REPLAY_SPEED = { min: 1, max: 600, default: 60 } as const;
/** Replays one key may have scheduled or running at once. */
export const MAX_RUNNING_REPLAYS = 5;

const Iso = Type.String({ description: 'ISO 8601 UTC timestamp.' });
const NullableIso = Type.Union([Iso, Type.Null()]);

export const Replay = Type.Object(
  {
    id: Type.String({ description: 'rpl_…' }),
    game_id: Type.String({ description: 'The replay’s own game (`<sport>_<number>`), visible to the key that created the replay only.' }),
    source_game_id: Type.String({ description: 'The final game being replayed.' }),
    speed: Type.Integer({ minimum: REPLAY_SPEED.min, maximum: REPLAY_SPEED.max, description: 'Game time runs this many times faster than real time.' }),
    status: Type.Union(
      REPLAY_STATUSES.map((s) => Type.Literal(s)),
      { description: '`scheduled` until its first play, `running`, then `finished` (its game is final) or `cancelled`.' },
    ),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why a cancelled replay stopped; null otherwise.' }),
    created_at: Iso,
    started_at: NullableIso,
    finished_at: Type.Union([Iso, Type.Null()], { description: 'When it finished or was cancelled.' }),
  },
  { additionalProperties: false },
);
export type Replay = Static<typeof Replay>;

export const CreateReplayInput = Type.Object(
  {
    game_id: Type.String({ minLength: 1, maxLength: 64, description: 'A final soccer or basketball game (`<sport>_<number>`) to replay.' }),
    speed: Type.Optional(
      Type.Integer({
        minimum: REPLAY_SPEED.min,
        maximum: REPLAY_SPEED.max,
        default: REPLAY_SPEED.default,
        description: `Game time runs this many times faster than real time: ${REPLAY_SPEED.min}–${REPLAY_SPEED.max}, default ${REPLAY_SPEED.default}.`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateReplayInput = Static<typeof CreateReplayInput>;
