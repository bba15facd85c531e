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
