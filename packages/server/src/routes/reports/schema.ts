import { Type } from '@sinclair/typebox';
import { ReportBatch, ReportInput, ReportResult } from '@svc/schema';
import { errorResponses } from '../common.js';

export const postReports = {
  tags: ['ingestion'],
  summary: 'Submit crowd reports: one, or {"reports": [...]} up to 500',
  body: Type.Union([ReportInput, ReportBatch]),
  response: { 202: Type.Object({ data: Type.Array(ReportResult) }), ...errorResponses },
};
