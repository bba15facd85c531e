export { Svc, Teams, Players, Venues, Seasons, Competitions, Games, StandingsResource, Leaders, Reports, Plays, Webhooks, Notifications, Replays, Reporters, StreamTokens, connectStream, type StreamAccess } from './client.js';
export { VERSION, USER_AGENT, type ClientOptions, type RequestOptions, type Fetch } from './core.js';
export { APIPromise, type WithResponse } from './api-promise.js';
export type { Logger, LogLevel } from './log.js';
export { Page, PagePromise, type ListEnvelope } from './pagination.js';
export { Changes, ChangeFollower, type FollowParams } from './changes.js';
export { ExportIterable } from './export.js';
export {
  EventStream,
  type StreamOptions,
  type StreamParams,
  type WebSocketConstructor,
  type StandardWebSocket,
  type EventSourceConstructor,
  type StandardEventSource,
  type StreamTokenSource,
} from './stream.js';
export {
  verifyWebhook,
  webhookSignatureFailure,
  generateTestHeaderString,
  SIGNATURE_HEADER,
  DEFAULT_TOLERANCE_S,
  type VerifyWebhookOptions,
  type TestHeaderOptions,
  type SignatureSource,
  type HeaderRecord,
} from './webhooks.js';
export {
  SvcError,
  APIError,
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  RateLimitError,
  InternalServerError,
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  SchemaMismatchError,
  WebhookVerificationError,
  type ErrorDetail,
  type WebhookVerificationFailure,
} from './errors.js';
export type * from './schema.js';
export { EVENT_SCHEMA, PLAY_SCHEMA, STREAM_CLOSE_CODES } from './schema.js';
export type { ExportRecord } from './export.js';
export { Svc as default } from './client.js';
