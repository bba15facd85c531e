import { Type } from '@sinclair/typebox';
import { ReportInput } from '@svc/schema';
import { errorResponses } from '../common.js';

export const ReportResult = Type.Object(
  {
    id: Type.String({ description: 'rpt_…' }),
    event_id: Type.Union([Type.String(), Type.Null()], { description: 'The event this report joined (provisional or confirmed).' }),
    tier: Type.Union([Type.Literal('provisional'), Type.Literal('confirmed')]),
  },
  { additionalProperties: false },
);

export const MAX_BATCH = 500;
export const ReportBatch = Type.Object({ reports: Type.Array(ReportInput, { minItems: 1, maxItems: MAX_BATCH }) }, { additionalProperties: false });

export const postReports = {
  tags: ['ingestion'],
  summary: 'Submit crowd reports: one, or {"reports": [...]} up to 500',
  body: Type.Union([ReportInput, ReportBatch]),
  response: { 202: Type.Object({ data: Type.Array(ReportResult) }), ...errorResponses },
};
