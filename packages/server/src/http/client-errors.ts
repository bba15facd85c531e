import http from 'node:http';
import type { Socket } from 'node:net';
import { SvcError } from '../domain/errors.js';
import { errorBody } from './errors.js';

interface ConnectionError extends Error {
  code?: string;
}

/**
 * Requests Node refuses before Fastify sees them (its `clientError` event): headers too large
 * (431: a 20 kB query string lands here), headers or body too slow (408, see the timeouts in
 * `config.ts`), bytes that are not HTTP/1.1 (400). They get the documented body and an
 * `X-Request-Id` like every other answer.
 */
export function clientError(err: ConnectionError): SvcError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new SvcError('request_timeout', 'The request was not received in time; send headers and body without pausing.');
    case 'HPE_HEADER_OVERFLOW':
      return new SvcError('headers_too_large', 'The request line and headers are larger than 16 kB; shorten the query string.');
    default:
      return new SvcError('malformed_request', 'The request is not valid HTTP/1.1.');
  }
}

/** Fastify's `clientErrorHandler`: answers on the raw socket when it still can, then closes it. */
export function clientErrorHandler(nextRequestId: () => string): (err: ConnectionError, socket: Socket) => void {
  return (err, socket) => {
    // A reset connection has no one to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // Node's own rule: no answer once a response on this socket has started (a pipelined request).
    const current: unknown = Reflect.get(socket, '_httpMessage');
    const started = typeof current === 'object' && current !== null && Reflect.get(current, 'headersSent') === true;
    if (socket.writable && !started) {
      const id = nextRequestId();
      const e = clientError(err);
      const body = JSON.stringify(errorBody(e, id));
      socket.write(
        `HTTP/1.1 ${e.status} ${http.STATUS_CODES[e.status] ?? 'Error'}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
