import { randomBytes } from 'node:crypto';
import { Controller, Get, Res } from '@nestjs/common';
import { SkipThrottle, Throttle, ThrottlerGuard } from '@nestjs/throttler';
import type { Response } from 'express';
import { PlanThrottlerGuard } from '../../../apps/gateway/src/rate-limit/plan-throttler.guard';
import { RateLimitStore } from '../../../apps/gateway/src/rate-limit/rate-limit-store';
import { RouteTable } from '../../../apps/gateway/src/routing/route-table';
import { mintKey } from '../../support/gateway';
import { call } from '../../support/http';
import { withStack } from '../../support/with-stack';

/**
 * PlanThrottlerGuard as the /v1 pipeline drives it, on the project's store (Redis when REDIS_URL is set, else in
 * process): a gateway serving this controller's routes in place of the pets controller (RouteTable.serveOnly),
 * its consumers' agreed limits 3 requests a minute and 100 a day, the anonymous limit 4 a minute.
 */
@Controller('t')
class ThrottledRoutes {
  @Get('plan')
  plan(@Res() response: Response): void {
    response.end('ok');
  }

  @Get('tight')
  @Throttle({ minute: { limit: 2 } })
  tight(@Res() response: Response): void {
    response.end('ok');
  }

  @Get('free')
  @SkipThrottle()
  free(@Res() response: Response): void {
    response.end('ok');
  }
}

describe('PlanThrottlerGuard (ThrottlerGuard keyed by plan)', () => {
  // No request reaches the pets service: the routes are the test's own.
  const stack = withStack({ petsUrl: 'http://127.0.0.1:9', gateway: { env: { ANON_RATE_LIMIT_PER_MINUTE: '4' } } });

  beforeAll(async () => {
    stack.gateway.app.get(RouteTable).serveOnly(ThrottledRoutes, new ThrottledRoutes());
  });

  const keys = new Map<string, string>();
  const keyOf = async (consumer: string) => {
    if (!keys.has(consumer))
      keys.set(consumer, await mintKey(stack.gateway, 'enterprise', consumer, { perMinute: 3, perDay: 100 }));
    return keys.get(consumer)!;
  };
  const as = async (consumer: string | undefined, path: string) =>
    call(`${stack.gateway.url}/v1/t/${path}`, {
      headers: consumer ? { authorization: `Bearer ${await keyOf(consumer)}` } : {},
    });
  const statuses = async (consumer: string | undefined, path: string, n: number) => {
    const seen: number[] = [];
    for (let i = 0; i < n; i += 1) seen.push((await as(consumer, path)).status);
    return seen;
  };

  it("is a ThrottlerGuard, and its storage is the project's rate-limit store", () => {
    const guard = stack.gateway.app.get(PlanThrottlerGuard);
    expect(guard).toBeInstanceOf(ThrottlerGuard);
    expect((guard as unknown as { storageService: unknown }).storageService).toBe(
      stack.gateway.app.get(RateLimitStore),
    );
  });

  it('holds a consumer to its plan, in one window set across routes, with the spec headers', async () => {
    const consumer = `plan-${randomBytes(3).toString('hex')}`;
    expect(await statuses(consumer, 'plan', 3)).toEqual([200, 200, 200]);
    const refused = await as(consumer, 'plan');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('3');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-policy')).toBe('"minute";q=3;w=60, "day";q=100;w=86400');
    // The plan counts every route: the tight route is refused too once the plan's minute is spent.
    expect((await as(consumer, 'tight')).status).toBe(429);
  });

  it('@Throttle on a route adds a tighter window of that route alone; the plan still counts it', async () => {
    const consumer = `tight-${randomBytes(3).toString('hex')}`;
    expect(await statuses(consumer, 'tight', 3)).toEqual([200, 200, 429]);
    const reply = await as(consumer, 'plan');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('ratelimit-policy')).toBe('"minute";q=3;w=60, "day";q=100;w=86400');
    expect((await as(consumer, 'tight')).headers.get('ratelimit-policy')).toContain('"tight-minute";q=2;w=60');
    // 2 tight + 1 plan: the plan's minute is spent.
    expect((await as(consumer, 'plan')).status).toBe(429);
  });

  it('@SkipThrottle() skips every named throttler: no counting, no headers', async () => {
    const consumer = `free-${randomBytes(3).toString('hex')}`;
    for (let i = 0; i < 8; i += 1) {
      const reply = await as(consumer, 'free');
      expect(reply.status).toBe(200);
      expect(reply.headers.get('x-ratelimit-limit')).toBeNull();
    }
    expect((await as(consumer, 'plan')).headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('counts a request without a consumer by address at the anonymous limit, with no day window', async () => {
    // Without a key the answer is 401, counted on the address: the fifth is over the anonymous limit.
    const seen = await statuses(undefined, 'plan', 5);
    expect(seen).toEqual([401, 401, 401, 401, 429]);
    expect((await as(undefined, 'plan')).headers.get('ratelimit-policy')).toBe('"minute";q=4;w=60');
  });

  it("answers from a handler that writes through Express's response with every field the steps set", async () => {
    // These routes write with @Res(), not ApiExchange.headers (no @WritesExchangeHeaders): the pipeline hands them
    // the collected fields first, so the request id, the security headers and the rate-limit headers still go out.
    const reply = await as(`fields-${randomBytes(3).toString('hex')}`, 'plan');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
    expect(reply.headers.get('cache-control')).toBe('private, no-store');
    expect(reply.headers.get('x-ratelimit-remaining')).toBe('2');
  });
});
