import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { json } from 'express';
import { ApiError } from './api-error';
import { INVALID_UTF8_TYPE, toErrorResponse } from './http-error-mapping';
import { isUtf8 } from 'node:buffer';
import { declaresBody, payloadTooLarge } from './request-body';
import { writeError } from './write-error';

/** Largest accepted request body. A NewPet is well under 1 KiB; 16 KiB leaves room without inviting abuse. */
export const BODY_LIMIT_BYTES = 16 * 1024;

const JSON_TYPES = ['application/json', 'application/*+json'];

/** A request that carries a body must say it is JSON: anything else is 415, never silently ignored. */
export const requireJsonContentType: RequestHandler = (request: Request, _response: Response, next: NextFunction) => {
  if (declaresBody(request) && !request.is(JSON_TYPES)) {
    const type = request.headers['content-type'];
    next(
      new ApiError(
        'UNSUPPORTED_MEDIA_TYPE',
        type
          ? `Content-Type "${type}" is not supported: send application/json.`
          : 'A request body needs Content-Type: application/json.',
      ),
    );
    return;
  }
  next();
};

/**
 * A body that declares more than `limit` bytes is refused at once, before a byte of it is read (body-parser
 * would read the declared bytes first), and the connection is closed rather than drained.
 */
export function assertDeclaredLengthWithin(request: Request, limit = BODY_LIMIT_BYTES): void {
  const declared = request.headers['content-length'];
  if (declared !== undefined && /^[0-9]+$/.test(declared) && Number(declared) > limit) {
    throw payloadTooLarge(limit);
  }
}

/** Middleware form of assertDeclaredLengthWithin. */
export function rejectDeclaredOversize(limit = BODY_LIMIT_BYTES): RequestHandler {
  return (request, _response, next) => {
    try {
      assertDeclaredLengthWithin(request, limit);
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * JSON is UTF-8 (RFC 8259): body-parser would decode invalid bytes to U+FFFD and store them silently; refuse them.
 */
function requireUtf8(_request: unknown, _response: unknown, body: Buffer): void {
  if (!isUtf8(body)) throw Object.assign(new Error('invalid UTF-8'), { status: 400, type: INVALID_UTF8_TYPE });
}

/** Errors raised before routing (content type, body parsing) get the same Error body as everything else. */
export const preRoutingErrorHandler: ErrorRequestHandler = (error: unknown, _request, response, _next) => {
  writeError(response, toErrorResponse(error));
};

/** Content-type check, then strict JSON parsing with the size limit. Put preRoutingErrorHandler behind them. */
export function jsonBodyMiddleware(limit = BODY_LIMIT_BYTES): RequestHandler[] {
  return [
    requireJsonContentType,
    rejectDeclaredOversize(limit),
    json({ limit, strict: true, type: JSON_TYPES, verify: requireUtf8 }),
  ];
}
