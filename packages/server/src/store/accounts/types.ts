/** A POST's recorded outcome under (API key, Idempotency-Key); times are epoch milliseconds. */
export interface IdempotencyTable {
  key_id: string;
  idempotency_key: string;
  /** SHA-256 of method, path and body: the same key with another request is refused. */
  fingerprint: string;
  /** Names the claim that owns the row, so only it completes or releases it. */
  claim_token: string;
  state: 'in_flight' | 'done';
  /** The request whose answer is recorded (its X-Request-Id). */
  request_id: string | null;
  status_code: number | null;
  content_type: string | null;
  body: string | null;
  created_at: number;
  expires_at: number;
}
export interface ApiKeyTable {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  environment: string;
  plan: string;
  products: string;
  sports: string | null;
  leagues: string | null;
  created_at: string;
  revoked_at: string | null;
}
export interface ReplayTable {
  id: string;
  key_id: string;
  game_id: string;
  competition_id: string;
  source_game_id: string;
  source_competition_id: string;
  speed: number;
  status: string;
  reason: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  driver: string | null;
  driver_until: string | null;
}
export interface AccountDatabase {
  api_keys: ApiKeyTable;
  idempotency_keys: IdempotencyTable;
  replays: ReplayTable;
}
