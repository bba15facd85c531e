/**
 * Which stored values are sealed and what each is bound to (the associated data of
 * `domain/secrets/sealed.ts`): a sealed value opens only on the row it was written for.
 */

/** `webhook_endpoints.secret` and `.previous_secret`: a rotation moves the value between the two columns of one row. */
export const endpointSecretAad = (endpointId: string): string => `webhook_endpoints:${endpointId}`;

/** `idempotency_keys.body`: a recorded answer, which for createWebhook and rotateWebhookSecret holds a secret. */
export const recordedAnswerAad = (keyId: string, idempotencyKey: string): string => `idempotency_keys:${keyId}:${idempotencyKey}`;

/** `meta` row sealed under the deployment key at first start: a start with another key fails on it. */
export const KEY_CHECK_META = 'secret_key_check';
export const KEY_CHECK_AAD = 'meta:secret_key_check';
export const KEY_CHECK_PLAINTEXT = 'svc secret key check';
