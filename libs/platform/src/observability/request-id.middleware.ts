import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Every request carries an X-Request-Id: the client's when it is a sane token, else a new UUID. It goes
 * upstream and comes back on the response, so one id follows a request through both apps' logs.
 */
export function requestId(request: Request, response: Response, next: NextFunction): void {
  const given = request.headers['x-request-id'];
  const id = typeof given === 'string' && ACCEPTABLE.test(given) ? given : randomUUID();
  request.headers['x-request-id'] = id;
  response.setHeader('X-Request-Id', id);
  next();
}
