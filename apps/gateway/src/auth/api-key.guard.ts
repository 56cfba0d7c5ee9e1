import { ApiError } from '@app/errors';
import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { GatewayRequest } from './gateway-request';
import { IS_PUBLIC } from './public.decorator';

/**
 * Deny by default: a route not marked @Public() answers only a request that AdmissionMiddleware admitted (it
 * authenticated the key and counted the request, before the router). This guard counts nothing: it is the
 * defence in depth for a route the middleware does not cover (one added outside /v1), which is then refused.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    if (context.switchToHttp().getRequest<GatewayRequest>().consumer) return true;
    throw new ApiError('UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <API key>.', {
      'WWW-Authenticate': 'Bearer realm="petstore"',
    });
  }
}
