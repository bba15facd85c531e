import { sql, type Kysely, type Migration } from 'kysely';
import { isSealed, type SecretBox } from '../../domain/secrets/sealed.js';
import { endpointSecretAad, recordedAnswerAad } from '../../domain/secrets/columns.js';

/**
 * Seals the webhook secrets and recorded idempotent answers written in plaintext before secrets
 * were encrypted at rest (docs/operations.md "Secrets at rest"). Needs the deployment key only
 * when such rows exist; without it the migration stops and says so.
 */
export function encryptedSecretsMigration(secrets: SecretBox | null): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const endpoints = await sql<{ id: string; secret: string; previous_secret: string | null }>`select id, secret, previous_secret from webhook_endpoints`.execute(db);
      const answers = await sql<{ key_id: string; idempotency_key: string; body: string }>`select key_id, idempotency_key, body from idempotency_keys where body is not null`.execute(db);
      const plainEndpoints = endpoints.rows.filter((r) => !isSealed(r.secret) || (r.previous_secret !== null && !isSealed(r.previous_secret)));
      const plainAnswers = answers.rows.filter((r) => !isSealed(r.body));
      if (plainEndpoints.length === 0 && plainAnswers.length === 0) return;
      if (!secrets) {
        throw new Error(
          `${plainEndpoints.length} webhook endpoint(s) and ${plainAnswers.length} recorded answer(s) hold plaintext secrets; open the database with SVC_SECRET_KEY (or the sandbox key file) so they can be encrypted`,
        );
      }
      const work = async (trx: Kysely<unknown>) => {
        for (const r of plainEndpoints) {
          const aad = endpointSecretAad(r.id);
          const secret = isSealed(r.secret) ? r.secret : secrets.seal(r.secret, aad);
          const previous = r.previous_secret === null || isSealed(r.previous_secret) ? r.previous_secret : secrets.seal(r.previous_secret, aad);
          await sql`update webhook_endpoints set secret = ${secret}, previous_secret = ${previous} where id = ${r.id}`.execute(trx);
        }
        for (const r of plainAnswers) {
          const body = secrets.seal(r.body, recordedAnswerAad(r.key_id, r.idempotency_key));
          await sql`update idempotency_keys set body = ${body} where key_id = ${r.key_id} and idempotency_key = ${r.idempotency_key}`.execute(trx);
        }
      };
      // PostgreSQL runs each migration in a transaction already; SQLite's migrator does not.
      if (db.isTransaction) await work(db);
      else await db.transaction().execute(work);
    },
  };
}
