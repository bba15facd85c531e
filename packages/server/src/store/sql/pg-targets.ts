import { parseIntoClientConfig } from 'pg-connection-string';
import type pg from 'pg';

/** One PostgreSQL server of `SVC_DATABASE_URL`. */
export interface PgHost {
  host: string;
  port: number;
}

/**
 * `SVC_DATABASE_URL` read as libpq reads it: one or several `host:port` pairs before the path
 * (`postgres://u:p@h1:5432,h2:5432/svc?target_session_attrs=read-write`), the rest shared by all.
 * node-postgres takes one host only; the pool connects to the one `PgPrimary` picks
 * (docs/operations.md, "Database failover").
 */
export interface PgTargets {
  hosts: PgHost[];
  /** Everything but the host: user, password, database, TLS, options. */
  client: Omit<pg.ClientConfig, 'host' | 'port' | 'connectionString'>;
  /**
   * Only a server that takes writes will do (`target_session_attrs=read-write` or `primary`, and
   * the default when several hosts are named: svc writes).
   */
  readWrite: boolean;
}

export class PgUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PgUrlError';
  }
}

const URL_SHAPE = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/;
const SESSION_ATTRS = new Set(['any', 'read-write', 'primary']);

/** Reads a postgres:// URL with one or several hosts; a bad one is a PgUrlError naming what is wrong, never the password. */
export function parsePgUrl(url: string): PgTargets {
  const m = URL_SHAPE.exec(url);
  if (!m) throw new PgUrlError('not a postgres:// URL');
  const [, scheme, auth, hostList, rest] = m;
  const hosts: PgHost[] = [];
  for (const part of hostList.split(',')) {
    const hm = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(part);
    if (!hm) throw new PgUrlError(`host '${part}' is not host or host:port`);
    const port = hm[2] === undefined ? 5432 : Number(hm[2]);
    if (port < 1 || port > 65535) throw new PgUrlError(`port ${port} is out of range`);
    hosts.push({ host: hm[1].replace(/^\[|\]$/g, ''), port });
  }
  const [path, query = ''] = rest.split('?', 2);
  const params = new URLSearchParams(query);
  const attrs = params.get('target_session_attrs') ?? (hosts.length > 1 ? 'read-write' : 'any');
  if (!SESSION_ATTRS.has(attrs)) throw new PgUrlError(`target_session_attrs=${attrs} is not supported (any, read-write or primary)`);
  params.delete('target_session_attrs');
  const left = params.toString();
  // The rest is node-postgres' own reading of a one-host URL (user, password, database, sslmode …).
  let parsed: pg.ClientConfig;
  try {
    parsed = parseIntoClientConfig(`${scheme}${auth === undefined ? '' : `${auth}@`}${hostList.split(',')[0]}${path}${left ? `?${left}` : ''}`);
  } catch (err) {
    throw new PgUrlError(err instanceof Error ? err.message : String(err));
  }
  const { host: _host, port: _port, connectionString: _cs, ...client } = parsed;
  return { hosts, client, readWrite: attrs !== 'any' };
}
