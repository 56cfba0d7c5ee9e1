import { ApiError } from '@app/errors';
import { INTERNAL_SECRET_HEADER, matchesInternalSecret } from '@app/platform';
import type { NextFunction, Request, Response } from 'express';

/**
 * With INTERNAL_SECRET set, only callers that present it (the gateway) reach the pets API, so a misrouted
 * internal port does not bypass the gateway's authentication and limits. Health stays open for orchestrators.
 */
export function requireInternalSecret(secret: string) {
  return (request: Request, _response: Response, next: NextFunction): void => {
    if (request.path.startsWith('/health/')) return next();
    const given = request.headers[INTERNAL_SECRET_HEADER];
    if (typeof given === 'string' && matchesInternalSecret(given, secret)) return next();
    next(new ApiError('UNAUTHORIZED', 'This service only answers the gateway.'));
  };
}
