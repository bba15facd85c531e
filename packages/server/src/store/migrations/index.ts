import type { MigrationProvider } from 'kysely';
import type { SecretBox } from '../../domain/secrets/sealed.js';
import { initialMigration } from './0001-initial.js';
import { webhooksMigration } from './0002-webhooks.js';
import { idempotencyMigration } from './0003-idempotency.js';
import { statusHistoryMigration } from './0004-status-history.js';
import { encryptedSecretsMigration } from './0005-encrypted-secrets.js';
import { consensusStateMigration } from './0006-consensus-state.js';
import { eventJsonMigration } from './0007-event-json.js';
import { webhookDueByEventMigration } from './0008-webhook-due-by-event.js';
import { reportIndexesMigration } from './0009-report-indexes.js';
import { replaysMigration } from './0010-replays.js';
import { groupsMigration } from './0011-groups.js';
import { scheduleMigration } from './0012-schedule-changes.js';
import { refusalsMigration } from './0013-write-refusals.js';
import { correctionsMigration } from './0014-corrections.js';
import { reporterSuspensionsMigration } from './0015-reporter-suspensions.js';
import { crowdTrustMigration } from './0016-crowd-trust.js';

/**
 * Every migration of the schema, one file each, numbered in the order they run (both engines run the
 * same list: docs/architecture.md "Persistence"). A shipped migration never changes; a new one is a
 * new file with the next number.
 */
type Engine = 'sqlite' | 'postgres';

/** `secrets` seals what 0005 finds in plaintext; only a database holding such rows needs it. */
export function migrationProvider(engine: Engine, secrets: SecretBox | null = null): MigrationProvider {
  return {
    async getMigrations() {
      return {
        '0001_initial': initialMigration(engine),
        '0002_webhooks': webhooksMigration(engine),
        '0003_idempotency': idempotencyMigration(engine),
        '0004_status_history': statusHistoryMigration(),
        '0005_encrypted_secrets': encryptedSecretsMigration(secrets),
        '0006_consensus_state': consensusStateMigration(engine),
        '0007_event_json': eventJsonMigration(engine),
        '0008_webhook_due_by_event': webhookDueByEventMigration(),
        '0009_report_indexes': reportIndexesMigration(),
        '0010_replays': replaysMigration(),
        '0011_groups': groupsMigration(engine),
        '0012_schedule_changes': scheduleMigration(engine),
        '0013_write_refusals': refusalsMigration(engine),
        '0014_corrections': correctionsMigration(),
        '0015_reporter_suspensions': reporterSuspensionsMigration(),
        '0016_crowd_trust': crowdTrustMigration(engine),
      };
    },
  };
}
