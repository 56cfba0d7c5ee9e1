import { ApiError } from '@app/errors';
import { recordEdgeOutcome } from '@app/platform/tracing/edge-outcome';
import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { hashApiKey, isWellFormedApiKey } from '../consumers/api-key';
import { KeyCache } from '../consumers/key-cache.service';
import { RateLimitStore } from '../rate-limit/rate-limit-store';
import { RateLimiter, Subject } from '../rate-limit/rate-limiter.service';
import type { GatewayRequest } from '../request/gateway-request';
import { IS_PUBLIC } from '../request/public.decorator';

const REALM = 'Bearer realm="petstore"';

/**
 * Deny by default: every route needs `Authorization: Bearer <key>` unless marked @Public(). Keys are checked
 * through the KeyCache. A refused request still counts against its address's anonymous limit (and gets its
 * headers), so guessing keys is throttled; an address over that limit is refused before any database query,
 * and the KeyCache caps the queries per second, so a flood of random well-formed keys cannot become a flood
 * of queries.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: KeyCache,
    private readonly limiter: RateLimiter,
    private readonly counters: RateLimitStore,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const request = context.switchToHttp().getRequest<GatewayRequest>();
    const response = context.switchToHttp().getResponse<Response>();
    const anonymous = this.limiter.forAnonymous(request);
    const header = request.headers.authorization;
    const match = header === undefined ? undefined : /^Bearer +([^\s]+) *$/i.exec(header);

    let refusal = 'Invalid or revoked API key.';
    if (match && isWellFormedApiKey(match[1])) {
      const hash = hashApiKey(match[1]);
      // A query would be needed: not for an address over its anonymous limit or banned for guessing (this throws
      // its 429). Over the limit, not only banned: with the grace period before strikes, a guesser would otherwise
      // get a query per request for the seconds until its ban.
      if (this.keys.needsLookup(hash) && (await this.refused(anonymous))) await this.limiter.enforce(anonymous, response);
      const result = await this.keys.authenticate(hash);
      if (result.outcome === 'valid') {
        recordEdgeOutcome({ consumer: result.consumer });
        request.consumer = result.consumer;
        return true;
      }
      if (result.outcome === 'unavailable') {
        await this.limiter.enforce(anonymous, response);
        throw new ApiError('SERVICE_UNAVAILABLE', 'The API key cannot be checked right now: retry shortly.', {
          'Retry-After': String(result.retryAfterS),
        });
      }
      if (result.reason === 'expired') refusal = 'Expired API key.';
    }

    recordEdgeOutcome({ consumer: null });
    await this.limiter.enforce(anonymous, response);
    if (header === undefined) {
      throw new ApiError('UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <API key>.', { 'WWW-Authenticate': REALM });
    }
    if (!match) {
      throw new ApiError('UNAUTHORIZED', 'Malformed Authorization header: expected Bearer <API key>.', {
        'WWW-Authenticate': `${REALM}, error="invalid_request"`,
      });
    }
    throw new ApiError('UNAUTHORIZED', refusal, { 'WWW-Authenticate': `${REALM}, error="invalid_token"` });
  }

  private async refused(subject: Subject): Promise<boolean> {
    const usage = await this.counters.usage(subject.tracker, subject.windows);
    return usage.bannedForMs > 0 || usage.windows.some((window) => window.count >= window.limit);
  }
}
