import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '@app/errors';
import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';

export const ADMIN_TOKEN = Symbol('ADMIN_TOKEN');
const REALM = 'Bearer realm="petstore-admin"';
export const MISSING_TOKEN_MESSAGE = 'Missing admin token: send Authorization: Bearer <ADMIN_TOKEN>.';
export const INVALID_TOKEN_MESSAGE = 'Invalid admin token.';

/** Digests of equal length, so that the comparison takes the same time whatever the token's length or content. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Every admin API route needs `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer;

  constructor(@Inject(ADMIN_TOKEN) token: string) {
    this.expected = digest(token);
  }

  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<Request>().headers.authorization;
    const match = header === undefined ? undefined : /^Bearer +([^\s]+) *$/i.exec(header);
    if (match && timingSafeEqual(digest(match[1]), this.expected)) return true;
    throw new ApiError('UNAUTHORIZED', header === undefined ? MISSING_TOKEN_MESSAGE : INVALID_TOKEN_MESSAGE, {
      'WWW-Authenticate': header === undefined ? REALM : `${REALM}, error="invalid_token"`,
    });
  }
}
