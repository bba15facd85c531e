import type { Kysely } from 'kysely';
import type { Notification } from '@svc/schema';
import { randomBase62 } from '../../domain/keys.js';
import type { Db } from '../sql/db.js';
import { newestFirst, pageOf, type Page, type PageRequest } from '../sql/page.js';
import type { Database } from '../sql/database.js';
import { notificationRecord, type NotificationRow } from './rows.js';

export const newNotificationId = (): string => `ntf_${randomBase62(20)}`;

/** Leaves a notification in the caller's transaction, so it exists exactly when what it reports does. */
export async function insertNotification(trx: Kysely<Database>, row: NotificationRow): Promise<Notification> {
  await trx.insertInto('notifications').values(row).execute();
  return notificationRecord(row);
}

/**
 * Notifications for the owner of a key (GET /v1/notifications), newest first. All the SQL of
 * `notifications` is in this module.
 */
export class NotificationStore {
  constructor(private readonly db: Db) {}

  async list(keyId: string, page: PageRequest): Promise<Page<Notification>> {
    const rows = await newestFirst(
      this.db.kysely
        .selectFrom('notifications')
        .selectAll()
        .where('key_id', '=', keyId),
      page,
    ).execute();
    return pageOf(rows, page.limit, (r) => [r.created_at, r.id], notificationRecord);
  }
}
