import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'express';
import type { Logger } from 'pino';
import pinoHttp from 'pino-http';
import { routeOf } from './http-metrics';

/**
 * One JSON line per request: request id, method, route, status, duration and (on the gateway) the consumer's
 * name. Only these fields are logged: never headers, so never a key or an Authorization header.
 */
export function requestLogging(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: (request: IncomingMessage) => String(request.headers['x-request-id'] ?? ''),
    serializers: {
      req: (request: { id: string; method: string; url: string }) => ({ id: request.id, method: request.method, path: request.url.split('?')[0] }),
      res: (response: { statusCode: number }) => ({ status: response.statusCode }),
    },
    customProps: (request: IncomingMessage) => {
      const consumer = (request as Request & { consumer?: { name: string; plan: string } }).consumer;
      return { route: routeOf(request as Request), ...(consumer ? { consumer: consumer.name, plan: consumer.plan } : {}) };
    },
    customLogLevel: (_request: IncomingMessage, response: ServerResponse, error?: Error) =>
      error || response.statusCode >= 500 ? 'error' : response.statusCode >= 400 ? 'warn' : 'info',
    customSuccessMessage: (request: IncomingMessage, response: ServerResponse) => `${request.method} ${routeOf(request as Request)} ${response.statusCode}`,
    customErrorMessage: (request: IncomingMessage, response: ServerResponse) => `${request.method} ${routeOf(request as Request)} ${response.statusCode}`,
    quietReqLogger: true,
  });
}
