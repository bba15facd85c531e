import { migrationProvider } from '../migrations/index.js';

/** The migrations this build knows, by name (the same list on both engines). */
export async function knownMigrations(): Promise<string[]> {
  return Object.keys(await migrationProvider('sqlite').getMigrations()).sort();
}

/** Where a database's schema stands against this build's. */
export type SchemaStanding = { at: 'current' } | { at: 'newer'; unknown: string[] } | { at: 'older'; missing: string[] };

/**
 * A database that ran a migration this build does not know was written by a newer build: this
 * one cannot tell what its tables mean. One that lacks some is older: a node of this build
 * migrates it when it opens it.
 */
export function schemaStanding(ran: readonly string[], known: readonly string[]): SchemaStanding {
  const unknown = ran.filter((m) => !known.includes(m));
  if (unknown.length > 0) return { at: 'newer', unknown };
  const missing = known.filter((m) => !ran.includes(m));
  return missing.length > 0 ? { at: 'older', missing } : { at: 'current' };
}
