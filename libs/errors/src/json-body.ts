import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { json } from 'express';
import { ApiError } from './api-error';
import { toErrorResponse } from './http-error-mapping';
import { writeError } from './write-error';

/** Largest accepted request body. A NewPet is well under 1 KiB; 16 KiB leaves room without inviting abuse. */
export const BODY_LIMIT_BYTES = 16 * 1024;

const JSON_TYPES = ['application/json', 'application/*+json'];

function hasBody(request: Request): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** A request that carries a body must say it is JSON: anything else is 415, never silently ignored. */
export const requireJsonContentType: RequestHandler = (request: Request, _response: Response, next: NextFunction) => {
  if (hasBody(request) && !request.is(JSON_TYPES)) {
    const type = request.headers['content-type'];
    next(
      new ApiError(
        'UNSUPPORTED_MEDIA_TYPE',
        type ? `Content-Type "${type}" is not supported: send application/json.` : 'A request body needs Content-Type: application/json.',
      ),
    );
    return;
  }
  next();
};

/** Errors raised before routing (content type, body parsing) get the same Error body as everything else. */
export const preRoutingErrorHandler: ErrorRequestHandler = (error: unknown, _request, response, _next) => {
  writeError(response, toErrorResponse(error));
};

/** Content-type check, then strict JSON parsing with the size limit. Put preRoutingErrorHandler behind them. */
export function jsonBodyMiddleware(limit = BODY_LIMIT_BYTES): RequestHandler[] {
  return [requireJsonContentType, json({ limit, strict: true, type: JSON_TYPES })];
}
