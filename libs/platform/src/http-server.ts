import { ErrorBody, ErrorCode, ERROR_CODES } from '@app/errors';
import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** How long a connection may take at each stage (milliseconds). */
export interface HttpServerLimits {
  /** An idle keep-alive connection is closed after this; above the balancer's own idle timeout. */
  keepAliveTimeoutMs: number;
  /** Time from the first byte of a request to the end of its headers. */
  headersTimeoutMs: number;
  /** Time from the first byte of a request to the end of its body. */
  requestTimeoutMs: number;
}

/**
 * Keep-alive above the idle timeouts of common balancers (AWS ALB and nginx: 60 s), so that the balancer, not
 * the app, always closes an idle connection first: a balancer that reuses a connection the app is closing
 * turns a POST it will not retry into a 502. Headers and body are bounded from the first byte of a request,
 * which Node counts separately from the keep-alive idle time.
 */
export const DEFAULT_HTTP_SERVER_LIMITS: HttpServerLimits = {
  keepAliveTimeoutMs: 75_000,
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 30_000,
};

/** What the HTTP parser (or its timers) refused, as the Error body; undefined: close without answering. */
export function clientErrorBody(error: NodeJS.ErrnoException & { reason?: string }): ErrorBody | undefined {
  const code = error.code ?? '';
  const body = (errorCode: ErrorCode, message: string): ErrorBody => ({
    code: errorCode,
    message,
    status: ERROR_CODES[errorCode],
  });
  if (code === 'HPE_HEADER_OVERFLOW') {
    return body(
      'HEADERS_TOO_LARGE',
      'The request line and headers exceed 16 KiB: shorten the query string or the headers.',
    );
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return body('REQUEST_TIMEOUT', 'The request was not received in time.');
  if (code.startsWith('HPE_')) {
    const reason = error.reason ? ` (${error.reason.replace(/[^\x20-\x7e]/g, '')})` : '';
    return body('MALFORMED_REQUEST', `The request is not well-formed HTTP/1.1${reason}.`);
  }
  return undefined;
}

/** Errors Node raises before Express sees a request: answered with the Error body, then the connection closes. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const body = clientErrorBody(error);
  // A response already under way (Node keeps it on the socket) cannot be replaced: cut the connection.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (!body || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${body.status} ${STATUS_CODES[body.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(json)}\r\n` +
      'Cache-Control: no-store\r\n' +
      'Connection: close\r\n\r\n' +
      json,
  );
  // Whatever the app still writes for this request goes nowhere.
  if (inFlight) inFlight.destroy();
}

/**
 * Timeouts and parser errors of an app's HTTP server (call before listen): keep-alive, header and request
 * timeouts from `limits`, and a `clientError` handler so that 431, 408 and broken framing carry the Error body.
 */
export function hardenHttpServer(server: Server, limits: HttpServerLimits = DEFAULT_HTTP_SERVER_LIMITS): void {
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  // Node checks those two every 30 s by default: a 20 s limit would then hold for up to 50 s.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(
    100,
    Math.min(1000, Math.floor(limits.headersTimeoutMs / 4)),
  );
  server.on('clientError', answerClientError);
}
