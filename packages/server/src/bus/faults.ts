/**
 * ioredis failures that mean "Redis is away" (docs/operations.md, "Faults"): a command that gave up
 * after its retries, or one sent on a connection that is closed or cannot take writes. The HTTP
 * layer answers them with 503 `bus_unavailable`, never with ioredis's text.
 */
const CLOSED_MESSAGES = ['Connection is closed.', "Stream isn't writeable", 'Command timed out', 'Reached the max retries per request limit'];

export const BUS_FAULT_MESSAGE = 'Redis cannot be reached right now and this call needs it; retry shortly.';

export function busFault(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  return CLOSED_MESSAGES.some((m) => err.message.startsWith(m));
}
