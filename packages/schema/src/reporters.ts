/**
 * The operator's view of the crowd (docs/reporters.md): each voter's track record, whether the
 * flag rule marks it, and whether it is suspended. A voter is an API key's own voice or an end
 * user the key names in a report's `reporter`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Cursor, Limit } from './params.js';

const Count = (description: string) => Type.Integer({ minimum: 0, description });

export const Reporter = Type.Object(
  {
    id: Type.String({ description: '`rep_…`: stable for the key and the reporter it names; pass it to suspend and restore.' }),
    key_id: Type.String({ description: 'The API key the reports came through (`key_…`).' }),
    reporter: Type.Union([Type.String(), Type.Null()], { description: 'The end user the key named in `reporter`; null for the key’s own voice.' }),
    weight: Type.Number({ minimum: 0, maximum: 1, description: 'The weight its next vote carries, from its track record (docs/consensus.md "Weights").' }),
    reports: Count('Reports stored from it, counted or not.'),
    agreed: Count('Votes for candidates the crowd or an official source confirmed.'),
    disagreed: Count('Votes for candidates that were retracted.'),
    official_confirmed: Count('Votes for plays an official source recorded.'),
    official_contradicted: Count('Votes for scores the official record does not hold.'),
    flagged: Type.Boolean({ description: 'The flag rule marks it (docs/reporters.md): official contradictions, repeated retractions or far more reports than its games had plays.' }),
    suspended: Type.Boolean({ description: 'Its reports are stored but start and join nothing.' }),
    last_report_at: Type.Union([Type.String(), Type.Null()], { description: 'When its latest report arrived (ISO 8601 UTC); null when none is stored.' }),
  },
  { additionalProperties: false },
);
export type Reporter = Static<typeof Reporter>;

const BoolFilter = (description: string) => Type.Union([Type.Literal('true'), Type.Literal('false')], { description });

export const ListReportersQuery = Type.Object(
  {
    key: Type.Optional(Type.String({ pattern: '^key_[A-Za-z0-9]{1,64}$', description: 'Only the reporters of this API key (`key_…`).' })),
    flagged: Type.Optional(BoolFilter('`true`: only those the flag rule marks; `false`: only the others.')),
    suspended: Type.Optional(BoolFilter('`true`: only suspended reporters; `false`: only the others.')),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
export type ListReportersQuery = Static<typeof ListReportersQuery>;

/** `rep_…`: a reporter's id. */
export const REPORTER_ID = /^rep_~?[A-Za-z0-9_-]{1,400}$/;
