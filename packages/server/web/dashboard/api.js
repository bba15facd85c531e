// The dashboard's only way to the server: the public REST API with the signed-in key.
// The key lives in sessionStorage (this tab only) and travels only in the Authorization header.

const STORAGE_KEY = 'svc.apiKey';

export const session = {
  /** @returns {string | null} */
  key: () => sessionStorage.getItem(STORAGE_KEY),
  /** @param {string} key */
  set: (key) => sessionStorage.setItem(STORAGE_KEY, key),
  clear: () => sessionStorage.removeItem(STORAGE_KEY),
};

export class ApiError extends Error {
  constructor(status, body) {
    const e = body && typeof body === 'object' && body.error ? body.error : {};
    super(e.message ?? `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.type = e.type ?? null;
    this.code = e.code ?? null;
    this.param = e.param ?? null;
    this.requestId = e.request_id ?? null;
  }
}

/** @type {((rate: {limit: number, remaining: number, reset: number}) => void)[]} */
const rateListeners = [];
export const onRateLimit = (fn) => rateListeners.push(fn);

/**
 * One API call. Throws ApiError with the API's own message on a non-2xx answer.
 * @param {'GET'|'POST'|'PATCH'|'DELETE'} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {string} [key] the key to use instead of the session's (sign-in)
 */
export async function api(method, path, body, key = session.key() ?? '') {
  const headers = { authorization: `Bearer ${key}`, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
    credentials: 'omit',
    referrerPolicy: 'no-referrer',
  });
  const limit = res.headers.get('RateLimit-Limit');
  if (limit !== null) {
    const rate = { limit: Number(limit), remaining: Number(res.headers.get('RateLimit-Remaining')), reset: Number(res.headers.get('RateLimit-Reset')) };
    for (const fn of rateListeners) fn(rate);
  }
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}
