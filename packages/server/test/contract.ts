import { expect } from 'vitest';

/** The documented error body: `{"error": {type, code, message, param?, request_id}}`. */
export function expectError(
  res: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
  type: string,
  extra: { code?: string; param?: string } = {},
): void {
  expect(res.statusCode, JSON.stringify(res.json())).toBe(status);
  const body = res.json();
  expect(body).toMatchObject({ error: { type, ...(extra.code ? { code: extra.code } : {}) } });
  const err = (body as { error: Record<string, unknown> }).error;
  expect(typeof err.message).toBe('string');
  expect(err.request_id).toMatch(/^req_/);
  expect(res.headers['x-request-id']).toBe(err.request_id);
  for (const k of Object.keys(err)) expect(['type', 'code', 'message', 'param', 'request_id']).toContain(k);
  if (extra.param !== undefined) expect(err.param).toBe(extra.param);
}
