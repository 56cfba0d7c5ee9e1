import { ApiError } from '@app/errors';
import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { IS_PUBLIC } from './public.decorator';

/**
 * Deny by default for every route Nest's router serves: only those marked @Public() (health) answer. Every
 * /v1 request is authenticated and counted by the pipeline (apps/gateway/src/pipeline) and never reaches
 * Nest's router, so a route added outside /v1 without @Public() is refused rather than served unauthenticated.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    throw new ApiError('UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <API key>.', {
      'WWW-Authenticate': 'Bearer realm="petstore"',
    });
  }
}
