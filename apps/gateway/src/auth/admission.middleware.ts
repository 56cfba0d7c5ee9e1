import { ApiError } from '@app/errors';
import { recordEdgeOutcome } from '@app/platform/tracing/edge-outcome';
import { ExecutionContext, Injectable, NestMiddleware } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { NextFunction, Response } from 'express';
import { hashApiKey, isWellFormedApiKey } from '../consumers/api-key';
import { KeyCache } from '../consumers/key-cache.service';
import { PlanThrottlerGuard } from '../rate-limit/plan-throttler.guard';
import { ControllerRoute } from '../routing/controller-routes';
import { RouteTable, UnroutedRequest } from '../routing/route-table';
import { UsageService } from '../usage/usage.service';
import type { GatewayRequest } from './gateway-request';

const REALM = 'Bearer realm="petstore"';
const UNROUTED = { controller: UnroutedRequest, handler: UnroutedRequest.prototype.unrouted };

/**
 * Admission of every request under /v1, before the router looks at it (so a 404, a 405 or the router's 400 for a
 * path it cannot decode are authenticated and counted like any other answer): authenticate, then run
 * PlanThrottlerGuard for the route the request will reach, for the consumer when the key is valid, else for the
 * client address (the anonymous limit); the rate-limit headers are set either way. A refused key still counts
 * against its address, so guessing keys is throttled and ends in a ban; a flood of random well-formed keys costs
 * no query (the KeyCache's filter of valid keys refuses them) but its ~1 % false positives, capped per second.
 * What it throws is answered by the shared exception filter (create-gateway-app.ts mounts it). Every answer is
 * counted in the usage history (UsageService.track) when its response finishes.
 */
@Injectable()
export class AdmissionMiddleware implements NestMiddleware<GatewayRequest, Response> {
  constructor(
    private readonly keys: KeyCache,
    private readonly throttler: PlanThrottlerGuard,
    private readonly routes: RouteTable,
    private readonly usage: UsageService,
  ) {}

  /** Express-style: calls `next()` once admitted, `next(error)` with the refusal otherwise. */
  use(request: GatewayRequest, response: Response, next: NextFunction): void {
    this.admit(request, response, this.routes.resolve(request.method, request.url)).then(() => next(), next);
  }

  /** Admits a request for `route` (the fast path knows it; the routed path asks the route table). */
  async admit(request: GatewayRequest, response: Response, route: Pick<ControllerRoute, 'controller' | 'handler'> | undefined): Promise<void> {
    const { controller, handler } = route ?? UNROUTED;
    // Every /v1 request passes here once (routed or fast path): its answer, whatever writes it, is counted once.
    this.usage.track(request, response);
    const context = new ExecutionContextHost([request, response], controller, handler);
    request.consumer = await this.authenticate(request, context);
    await this.throttler.decide(context);
  }

  /** The request's consumer, or the refusal (401, 503, or the anonymous limit's 429), counted on its address. */
  private async authenticate(request: GatewayRequest, context: ExecutionContext): Promise<NonNullable<GatewayRequest['consumer']>> {
    const header = request.headers.authorization;
    const match = header === undefined ? undefined : /^Bearer +([^\s]+) *$/i.exec(header);

    let refusal = 'Invalid or revoked API key.';
    if (match && isWellFormedApiKey(match[1])) {
      // The key first, whatever its address's anonymous history (a valid key from an address banned for
      // guessing is still the consumer's): a key not in the key filter is refused without a query (but for a
      // few a second), and KEY_LOOKUPS_PER_SECOND bounds the queries of the rest. A refused key then meets the
      // address's limit or ban.
      const result = await this.keys.authenticate(hashApiKey(match[1]));
      if (result.outcome === 'valid') {
        request.usageKeyId = result.keyId;
        recordEdgeOutcome({ consumer: result.consumer });
        return result.consumer;
      }
      if (result.outcome === 'unavailable') {
        await this.throttler.decide(context);
        throw new ApiError('SERVICE_UNAVAILABLE', 'The API key cannot be checked right now: retry shortly.', {
          'Retry-After': String(result.retryAfterS),
        });
      }
      if (result.reason === 'expired') refusal = 'Expired API key.';
    }

    recordEdgeOutcome({ consumer: null });
    await this.throttler.decide(context);
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
}
