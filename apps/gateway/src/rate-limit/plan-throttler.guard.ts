import { ApiError } from '@app/errors';
import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectThrottlerOptions, InjectThrottlerStorage, ThrottlerGuard, ThrottlerModuleOptions, ThrottlerStorage } from '@nestjs/throttler';
import type { Response } from 'express';
import type { GatewayRequest } from '../request/gateway-request';
import { IS_PUBLIC } from '../request/public.decorator';
import { RateLimiter } from './rate-limiter.service';

/**
 * @nestjs/throttler's guard, keyed by consumer instead of by IP and route: one counter per window per consumer
 * across all operations, with the limits of the consumer's plan. ThrottlerGuard asks its storage once per
 * throttler; this guard decides both windows in one atomic call (one Redis round trip) so that a request
 * refused by the day window does not eat minute quota, and so that instances cannot over-admit between calls.
 */
@Injectable()
export class PlanThrottlerGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly limiter: RateLimiter,
  ) {
    super(options, storage, reflector);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const { req, res } = this.getRequestResponse(context) as { req: GatewayRequest; res: Response };
    // ApiKeyGuard runs first; a request without a consumer here would be a wiring error, so deny.
    if (!req.consumer) throw new ApiError('UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <API key>.');
    await this.limiter.enforce(this.limiter.forConsumer(req.consumer), res);
    return true;
  }
}
