import { randomBytes } from 'node:crypto';
import { AppMetrics } from '@app/platform';
import { Controller, Get, Global, INestApplication, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { SkipThrottle, Throttle, ThrottlerGuard } from '@nestjs/throttler';
import type { NextFunction, Request, Response } from 'express';
import { Clock, SystemClock } from '../apps/gateway/src/clock';
import { GATEWAY_CONFIG, loadGatewayConfig } from '../apps/gateway/src/config/gateway.config';
import { PlanThrottlerGuard } from '../apps/gateway/src/rate-limit/plan-throttler.guard';
import { RateLimitModule } from '../apps/gateway/src/rate-limit/rate-limit.module';
import { RateLimitStore } from '../apps/gateway/src/rate-limit/rate-limit-store';
import { call } from './support/http';

/**
 * PlanThrottlerGuard as a Nest developer meets it: the global guard of an app with ThrottlerModule (RateLimitModule),
 * on the project's store (Redis when REDIS_URL is set, else in process). The consumer (as the gateway's admission
 * would have authenticated it) comes from a header here; its plan allows 3 requests a minute and 100 a day.
 */
@Controller('t')
class ThrottledRoutes {
  @Get('plan')
  plan(): string {
    return 'ok';
  }

  @Get('tight')
  @Throttle({ minute: { limit: 2 } })
  tight(): string {
    return 'ok';
  }

  @Get('free')
  @SkipThrottle()
  free(): string {
    return 'ok';
  }
}

describe('PlanThrottlerGuard (ThrottlerGuard keyed by plan)', () => {
  let app: INestApplication;
  let url: string;
  const prefix = `${process.env.REDIS_KEY_PREFIX ?? 'test:'}${randomBytes(6).toString('hex')}:`;
  const config = loadGatewayConfig({ NODE_ENV: 'test', LOG_LEVEL: 'error', ANON_RATE_LIMIT_PER_MINUTE: '4', REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: prefix });

  @Global()
  @Module({
    providers: [
      { provide: GATEWAY_CONFIG, useValue: config },
      { provide: Clock, useValue: new SystemClock() },
      { provide: AppMetrics, useValue: new AppMetrics('throttler-test') },
    ],
    exports: [GATEWAY_CONFIG, Clock, AppMetrics],
  })
  class Core {}

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [Core, RateLimitModule],
      controllers: [ThrottledRoutes],
      providers: [{ provide: APP_GUARD, useExisting: PlanThrottlerGuard }],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.use((request: Request & { consumer?: unknown }, _response: Response, next: NextFunction) => {
      const name = request.headers['x-consumer'];
      if (typeof name === 'string') request.consumer = { name, plan: 'free', limits: { perMinute: 3, perDay: 100 } };
      next();
    });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(() => app?.close());

  const as = (consumer: string | undefined, path: string) => call(`${url}/t/${path}`, { headers: consumer ? { 'x-consumer': consumer } : {} });
  const statuses = async (consumer: string | undefined, path: string, n: number) => {
    const seen: number[] = [];
    for (let i = 0; i < n; i += 1) seen.push((await as(consumer, path)).status);
    return seen;
  };

  it('is a ThrottlerGuard, and the store is ThrottlerModule\'s storage', () => {
    expect(app.get(PlanThrottlerGuard)).toBeInstanceOf(ThrottlerGuard);
    expect(app.get(RateLimitStore)).toBeDefined();
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
    const seen = await statuses(undefined, 'plan', 5);
    expect(seen).toEqual([200, 200, 200, 200, 429]);
    expect((await as(undefined, 'plan')).headers.get('ratelimit-policy')).toBe('"minute";q=4;w=60');
  });
});
