import { ApiError } from '@app/errors';
import { recordEdgeOutcome } from '@app/platform/tracing/edge-outcome';
import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { RateLimiter } from '../rate-limit/rate-limiter.service';
import { Consumer } from './consumer';
import { ConsumerRegistry } from './consumer-registry.service';
import { IS_PUBLIC } from './public.decorator';

/** The request as it travels through the gateway once the key is known. */
export interface GatewayRequest extends Request {
  consumer?: Consumer;
}

const REALM = 'Bearer realm="petstore"';

/**
 * Deny by default: every route needs `Authorization: Bearer <key>` unless marked @Public(). A refused request
 * still counts against its address's anonymous limit (and gets its headers), so guessing keys is throttled.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly registry: ConsumerRegistry,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const request = context.switchToHttp().getRequest<GatewayRequest>();
    const header = request.headers.authorization;
    const match = header === undefined ? undefined : /^Bearer +([^\s]+) *$/i.exec(header);
    const consumer = match ? this.registry.authenticate(match[1]) : undefined;
    recordEdgeOutcome({ consumer: consumer ?? null });
    if (consumer) {
      request.consumer = consumer;
      return true;
    }

    await this.limiter.enforce(this.limiter.forAnonymous(request), context.switchToHttp().getResponse<Response>());
    if (header === undefined) {
      throw new ApiError('UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <API key>.', { 'WWW-Authenticate': REALM });
    }
    if (!match) {
      throw new ApiError('UNAUTHORIZED', 'Malformed Authorization header: expected Bearer <API key>.', {
        'WWW-Authenticate': `${REALM}, error="invalid_request"`,
      });
    }
    throw new ApiError('UNAUTHORIZED', 'Invalid or revoked API key.', { 'WWW-Authenticate': `${REALM}, error="invalid_token"` });
  }
}
