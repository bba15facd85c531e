/**
 * The client's one door to `@svc/schema`. Everything the client says about records, events and
 * inputs is re-exported from here; `scripts/build.ts` replaces this module in `dist/` by a
 * self-contained copy (plain types and the few constants below as literals), so the published
 * package imports neither `@svc/schema` nor TypeBox.
 */
export type * from '@svc/schema';
export { EVENT_SCHEMA } from '@svc/schema';

import type { Competition, Confidence, Event, Play, Tier } from '@svc/schema';

// ---- Shapes not yet in packages/schema (being moved there); kept here until they land. ----

export type WireEvent = Pick<Event, 'id' | 'type' | 'tier' | 'game_id' | 'team' | 'points' | 'ts' | 'provisional_id' | 'retracted_id' | 'schema'> & {
  confidence: Confidence;
};
export type WebhookTestEvent = { id: string; type: 'test'; ts: string; schema: 'svc.event.v1' };
export type WebhookPayload = WireEvent | WebhookTestEvent;
export type WebhookEndpoint = {
  id: string;
  url: string;
  description: string | null;
  sports: string[] | null;
  tier: 'confirmed';
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  disabled_at: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
};
export type WebhookEndpointWithSecret = WebhookEndpoint & { secret: string };
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'disabled';
export type WebhookDelivery = {
  id: string;
  endpoint_id: string;
  event_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
};
export type WebhookAttempt = { attempt: number; at: string; status_code: number | null; duration_ms: number; error: string | null; response_excerpt: string | null };
export type WebhookDeliveryWithAttempts = WebhookDelivery & { attempt_log: WebhookAttempt[] };
export type Notification = { id: string; type: string; endpoint_id: string | null; reason: string | null; message: string; created_at: string };
export type CreateWebhookInput = { url: string; sports?: string[]; tier: string; description?: string };
export type UpdateWebhookInput = { url?: string; sports?: string[] | null; description?: string | null };
export type ReplayInput = { delivery_id: string } | { from: string; to: string };
export type ReplayResult = { replayed: number; delivery_ids: string[] };
export type DeletedWebhook = { id: string; deleted: true };
export type ReportResult = { id: string; event_id: string | null; tier: Tier };
export type PlayInput = {
  period: { unit: string; num: number; label: string };
  competitor_id: string;
  player_id?: string;
  event_type: string;
  points: number;
  clock?: string;
  ts?: string;
  source?: string;
};
export type ErrorCode = string;

export type PageParams = { limit?: number; cursor?: string };
export type ListTeamsParams = PageParams & { sport?: string; league?: string };
export type RosterParams = PageParams & { season?: string };
export type ListPlayersParams = PageParams & { sport?: string; league?: string; team?: string; season?: string; search?: string };
export type ListVenuesParams = PageParams & { sport?: string; league?: string };
export type ListSeasonsParams = PageParams & { sport?: string; league?: string };
export type ListCompetitionsParams = PageParams & {
  sport?: string;
  league?: string;
  season?: string;
  date?: string;
  team?: string;
  player?: string;
  status?: Competition['status'];
};
export type ListGamesParams = ListCompetitionsParams & { sport?: 'soccer' | 'basketball' };
export type ListDeliveriesParams = PageParams & { status?: DeliveryStatus };
export type ExportEntity = 'events' | 'plays' | 'competitions';
export type ExportParams = { league: string; season: string; entity?: ExportEntity; from?: string; to?: string; after?: string };
export type ExportRecord = { events: Event; plays: Play; competitions: Competition };
export type StreamParams = { sport?: string | string[]; league?: string | string[]; game?: string | string[]; tier?: Tier; since?: string };
export type WebhookTestResult = { event_id: string; delivery_id?: string; status_code?: number | null };
