import type { AccountDatabase } from '../accounts/types.js';
import type { ConsensusDatabase } from '../consensus/types.js';
import type { EventDatabase } from '../events/types.js';
import type { ReferenceDatabase } from '../reference/types.js';
import type { StatusDatabase } from '../status/types.js';
import type { WebhookDatabase } from '../webhooks/types.js';

/**
 * Every table of the schema, for Kysely: each room of store/ declares its own tables beside its
 * repository (store/README.md); this is their union. JSON columns are text; booleans are 0/1
 * integers on both engines.
 */
export interface MetaTable {
  key: string;
  value: string;
}
export interface Database extends AccountDatabase, ConsensusDatabase, EventDatabase, ReferenceDatabase, StatusDatabase, WebhookDatabase {
  meta: MetaTable;
}
