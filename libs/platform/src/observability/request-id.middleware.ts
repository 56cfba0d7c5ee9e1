import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/** The response header that carries the request's id. */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * Gives the request its id and returns it: the client's X-Request-Id when it is a sane token, else a new UUID.
 * It goes upstream and comes back on the response, so one id follows a request through both apps' logs.
 */
export function assignRequestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  const id = typeof given === 'string' && ACCEPTABLE.test(given) ? given : randomUUID();
  request.headers['x-request-id'] = id;
  return id;
}

/** Every request carries an X-Request-Id (assignRequestId), and so does its response. */
export function requestId(request: Request, response: Response, next: NextFunction): void {
  response.setHeader(REQUEST_ID_HEADER, assignRequestId(request));
  next();
}
