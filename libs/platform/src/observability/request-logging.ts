import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { unsampledLogFields } from '../tracing/sampling-first';
import { routeOf } from './http-metrics';

type Level = 'info' | 'warn' | 'error';

const levelOf = (status: number): Level => (status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info');

/** Who made a request, as an app knows it once the request is answered (the gateway: its consumer and plan). */
export type CallerOf = (request: Request) => { name: string; plan: string } | undefined;

/**
 * One JSON line per request: request id, method, route, status, duration and (on the gateway, through `callerOf`)
 * the consumer's name and plan. Only these fields are logged, never headers, so never a key or an Authorization header.
 * Written by hand rather than with pino-http: it costs nothing when the line's level is off (no child logger
 * per request), which matters on the hot path where production runs at "warn".
 */
export function requestLogging(logger: Logger, callerOf?: CallerOf, pathsOf: 'request' | 'route' = 'request') {
  return (request: Request, response: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    response.once('finish', () => {
      const level = levelOf(response.statusCode);
      if (!logger.isLevelEnabled(level)) return;
      const consumer = callerOf?.(request);
      const route = routeOf(request);
      logger[level](
        {
          req: {
            id: request.headers['x-request-id'],
            method: request.method,
            path: pathsOf === 'route' ? route : request.originalUrl.split('?')[0],
          },
          res: { status: response.statusCode },
          route,
          responseTime: Number(process.hrtime.bigint() - started) / 1e6,
          ...(consumer ? { consumer: consumer.name, plan: consumer.plan } : {}),
          ...unsampledLogFields(request),
        },
        `${request.method} ${route} ${response.statusCode}`,
      );
    });
    next();
  };
}
