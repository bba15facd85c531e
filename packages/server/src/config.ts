import path from 'node:path';
import { parseSecretKey, type SecretKey } from './domain/secrets/sealed.js';
import { PgUrlError, parsePgUrl } from './store/sql/pg-targets.js';

/** Typed configuration, read from the environment once at start and passed in from there. */
export interface Config {
  port: number;
  host: string;
  env: 'sandbox' | 'production';
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  role: 'all' | 'api' | 'worker';
  simulator: boolean;
  /** SVC_SIMULATOR_DISRUPTIONS: the simulator postpones and suspends games now and then (docs/schedule.md). */
  simulatorDisruptions: boolean;
  /** SVC_SIMULATOR_ATTACKS: the attackers the simulator's crowd takes (sim/README.md "Attackers"). */
  simulatorAttacks: SimAttack[];
  /** SVC_CHANGES_RETENTION_DAYS: how long the change feed keeps a change (docs/changes.md); at least 30. */
  changesRetentionDays: number;
  bootstrapKey: string | null;
  webhookRetryDelaysS: number[];
  webhookTimeoutMs: number;
  webhookDisableAfterS: number;
  webhookAllowPrivate: boolean;
  logLevel: string;
  bodyLimitBytes: number;
  /** Whole request (headers and body) must arrive within this; a slow body gets a 408. */
  requestTimeoutMs: number;
  /** Request line and headers must arrive within this (slowloris); at most requestTimeoutMs. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection closes after this; above common proxies' 60 s idle so they close first. */
  keepAliveTimeoutMs: number;
  /** A socket with no traffic either way for this long is closed (a stalled client mid-response). */
  connectionTimeoutMs: number;
  /**
   * SVC_SECRET_KEY: seals webhook secrets at rest (docs/operations.md "Secrets at rest"). Null when
   * unset; the sandbox then keeps a generated one in the data dir, production refuses to start.
   */
  secretKey: SecretKey | null;
  /** Every Redis key and channel starts with this, so deployments can share one Redis. */
  redisPrefix: string;
  /** A game's consensus lease lapses this long after its owner's last renewal (docs/consensus.md, "Cluster"). */
  consensusLeaseMs: number;
  /** An unconfirmed provisional is retracted this long after its first report (docs/consensus.md). */
  consensusRetractMs: number;
  /** This node's name on consensus leases; null: `single` without Redis, else unique per process. */
  nodeId: string | null;
  /** Memory for the competitions of settled days (docs/decisions.md, "Settled days"); 0 turns it off. */
  settledDaysBytes: number;
  /** Nice value of the process's helper threads under `svc serve` (docs/decisions.md "Event loop first"); 0, the default, leaves them alone. */
  helperThreadNice: number;
}

export class ConfigError extends Error {}

/** The attacks of the threat model the simulator can play (docs/consensus.md "Threat model"). */
export const SIM_ATTACKS = ['troll', 'swarm', 'colluders', 'sleepers', 'flippers'] as const;
export type SimAttack = (typeof SIM_ATTACKS)[number];

/** A comma list of attacks; `none` (or empty) for none; the default all of them. */
function attacks(env: Env): SimAttack[] {
  const raw = env.SVC_SIMULATOR_ATTACKS;
  if (raw === undefined) return [...SIM_ATTACKS];
  const names = raw.split(',').map((s) => s.trim()).filter((s) => s !== '' && s !== 'none');
  const out: SimAttack[] = [];
  for (const name of names) {
    const hit = SIM_ATTACKS.find((a) => a === name);
    if (!hit) throw new ConfigError(`SVC_SIMULATOR_ATTACKS must be a comma list of ${SIM_ATTACKS.join(', ')} (or none), got '${raw}'`);
    if (!out.includes(hit)) out.push(hit);
  }
  return out;
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got '${raw}'`);
  }
  return n;
}

function flag(env: Env, name: string, dflt: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (['1', 'true', 'on', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'off', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be on or off, got '${raw}'`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], dflt: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const hit = allowed.find((a) => a === raw);
  if (!hit) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`);
  return hit;
}

export function keyPrefix(env: Config['env']): string {
  return env === 'production' ? 'svc_live_' : 'svc_test_';
}

function nodeId(env: Env): string | null {
  const raw = env.SVC_NODE_ID;
  if (raw === undefined || raw === '') return null;
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(raw)) throw new ConfigError(`SVC_NODE_ID must be 1-64 letters, digits, '.', '_' or '-', got '${raw}'`);
  return raw;
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const databaseUrl = env.SVC_DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(`SVC_DATABASE_URL must be a postgres:// URL, got '${databaseUrl.replace(/\/\/[^@]*@/, '//***@')}'`);
  }
  if (databaseUrl) {
    try {
      parsePgUrl(databaseUrl);
    } catch (err) {
      if (!(err instanceof PgUrlError)) throw err;
      throw new ConfigError(`SVC_DATABASE_URL: ${err.message}`);
    }
  }
  const redisUrl = env.SVC_REDIS_URL || null;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('SVC_REDIS_URL must be a redis:// URL');
  const delaysRaw = env.SVC_WEBHOOK_RETRY_DELAYS ?? '0,60,300,1800,7200';
  const delays = delaysRaw.split(',').map((s) => Number(s.trim()));
  if (delays.length === 0 || delays.some((d) => !Number.isInteger(d) || d < 0)) {
    throw new ConfigError(`SVC_WEBHOOK_RETRY_DELAYS must be a comma list of whole seconds, got '${delaysRaw}'`);
  }
  const cfgEnv = oneOf(env, 'SVC_ENV', ['sandbox', 'production'] as const, 'sandbox');
  const bootstrapKey = env.SVC_BOOTSTRAP_KEY || null;
  if (bootstrapKey && !new RegExp(`^${keyPrefix(cfgEnv)}[A-Za-z0-9]{16,}$`).test(bootstrapKey)) {
    throw new ConfigError(`SVC_BOOTSTRAP_KEY must look like ${keyPrefix(cfgEnv)}<16+ letters or digits> in the ${cfgEnv} environment`);
  }
  const requestTimeoutMs = int(env, 'SVC_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000);
  const headersTimeoutMs = int(env, 'SVC_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  // Node refuses a header deadline later than the request deadline.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(`SVC_HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed SVC_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  }
  const secretKeyRaw = env.SVC_SECRET_KEY;
  let secretKey: SecretKey | null = null;
  if (secretKeyRaw !== undefined && secretKeyRaw !== '') {
    const parsed = parseSecretKey(secretKeyRaw);
    // The value itself is never echoed: it is a secret.
    if (!parsed.ok) throw new ConfigError(`SVC_SECRET_KEY must be 32 bytes written as 64 hex characters (openssl rand -hex 32), got ${secretKeyRaw.length} characters${parsed.reason === 'not_hex' ? ' with non-hex ones' : ''}`);
    secretKey = parsed.key;
  }
  const redisPrefix = env.SVC_REDIS_PREFIX || 'svc:';
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(redisPrefix)) {
    throw new ConfigError(`SVC_REDIS_PREFIX must be 1 to 64 letters, digits or ':_.-', got '${redisPrefix}'`);
  }
  const config: Config = {
    port: int(env, 'SVC_PORT', 8080, 0, 65535),
    host: env.SVC_HOST || '127.0.0.1',
    env: cfgEnv,
    dataDir: path.resolve(env.SVC_DATA_DIR || './data'),
    databaseUrl,
    redisUrl,
    role: oneOf(env, 'SVC_ROLE', ['all', 'api', 'worker'] as const, 'all'),
    simulator: flag(env, 'SVC_SIMULATOR', true),
    simulatorDisruptions: flag(env, 'SVC_SIMULATOR_DISRUPTIONS', true),
    simulatorAttacks: attacks(env),
    changesRetentionDays: int(env, 'SVC_CHANGES_RETENTION_DAYS', 30, 30, 36_500),
    bootstrapKey,
    webhookRetryDelaysS: delays,
    webhookTimeoutMs: int(env, 'SVC_WEBHOOK_TIMEOUT_MS', 5000, 1, 600_000),
    webhookDisableAfterS: int(env, 'SVC_WEBHOOK_DISABLE_AFTER_S', 86_400, 1, 365 * 86_400),
    webhookAllowPrivate: flag(env, 'SVC_WEBHOOK_ALLOW_PRIVATE', false),
    logLevel: env.SVC_LOG_LEVEL || 'info',
    bodyLimitBytes: int(env, 'SVC_BODY_LIMIT_BYTES', 1_048_576, 1024, 64 * 1_048_576),
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: int(env, 'SVC_KEEP_ALIVE_TIMEOUT_MS', 65_000, 100, 600_000),
    connectionTimeoutMs: int(env, 'SVC_CONNECTION_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    secretKey,
    redisPrefix,
    consensusLeaseMs: int(env, 'SVC_CONSENSUS_LEASE_MS', 8000, 300, 60_000),
    consensusRetractMs: int(env, 'SVC_CONSENSUS_RETRACT_MS', 90_000, 1000, 3_600_000),
    nodeId: nodeId(env),
    settledDaysBytes: int(env, 'SVC_SETTLED_DAYS_MB', 64, 0, 65_536) * 1_048_576,
    helperThreadNice: int(env, 'SVC_HELPER_THREAD_NICE', 0, 0, 19),
  };
  return { ...config, ...overrides };
}

/** The address a local client reaches a service at: a wildcard listen address is not one. */
export function localBaseUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}
