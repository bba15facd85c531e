import type { FastifyServerOptions } from 'fastify';

/**
 * No secret reaches a log line (README "Configuration", SVC_LOG_LEVEL). Three layers, because a
 * key can arrive in more places than a list of fields can name:
 * - the request serializer logs the URL with every credential-bearing query value replaced and
 *   any path segment that holds a key blanked (browsers pass `?access_token=` to the stream);
 * - the error serializer keeps type, code, message and stack only: Node's parse errors carry the
 *   raw request bytes (`rawPacket`), Authorization header included;
 * - a last pass over every finished line replaces anything shaped like an API key or a webhook
 *   secret, whatever field or message carried it.
 */

/** Query parameters whose value is a credential, compared after percent-decoding, case-blind. */
const SECRET_PARAMS = new Set(['access_token', 'token', 'api_key', 'apikey', 'key', 'secret', 'authorization']);
/** An API key (svc_live_/svc_test_), a webhook secret (whsec_) or a stream token (sst_), in any case. */
const SECRET_SHAPE = /(svc_(?:live|test)_|whsec_|sst_)[A-Za-z0-9_.-]+/gi;
const REDACTED = '[redacted]';

const decode = (s: string): string => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
};
const looksSecret = (s: string): boolean => {
  SECRET_SHAPE.lastIndex = 0;
  const hit = SECRET_SHAPE.test(decode(s));
  SECRET_SHAPE.lastIndex = 0;
  return hit;
};

/** The URL as it may be logged: credentials in the query and key-shaped path segments replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = (q === -1 ? url : url.slice(0, q))
    .split('/')
    .map((seg) => (looksSecret(seg) ? REDACTED : seg))
    .join('/');
  if (q === -1) return path;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      return SECRET_PARAMS.has(decode(name).toLowerCase()) || looksSecret(pair) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
  return `${path}?${query}`;
}

/** Any key- or secret-shaped text in a finished log line, replaced. */
export function scrubSecrets(line: string): string {
  return line.replace(SECRET_SHAPE, (_m, prefix: string) => `${prefix}${REDACTED}`);
}

interface LoggedRequest {
  method?: string;
  url?: string;
  hostname?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

interface LoggedError {
  name: string;
  message: string;
  stack?: string;
  code?: unknown;
  statusCode?: unknown;
}

export interface LogSettings {
  level: string;
  /** Where lines go; stdout when absent. Tests pass a capturing stream. */
  stream?: { write(line: string): unknown };
}

export function loggerOptions(settings: LogSettings): NonNullable<FastifyServerOptions['logger']> {
  return {
    level: settings.level,
    ...(settings.stream ? { stream: settings.stream } : {}),
    serializers: {
      req: (req: LoggedRequest) => ({
        method: req.method,
        url: redactUrl(req.url ?? ''),
        host: req.hostname,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort,
      }),
      err: (err: LoggedError) => ({
        type: err.name,
        message: err.message,
        stack: err.stack ?? '',
        ...(err.code !== undefined ? { code: err.code } : {}),
        ...(err.statusCode !== undefined ? { statusCode: err.statusCode } : {}),
      }),
    },
    hooks: { streamWrite: scrubSecrets },
  };
}
