import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ConsumersModule } from '../consumers/consumers.module';
import { PlanThrottlerGuard } from '../rate-limit/plan-throttler.guard';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { RoutingModule } from '../routing/routing.module';
import { UsageModule } from '../usage/usage.module';
import { AdmissionMiddleware } from './admission.middleware';
import { ApiKeyGuard } from './api-key.guard';

/**
 * Authentication and the rate-limit decision happen once, in AdmissionMiddleware, for every request under /v1
 * before the router (create-gateway-app.ts mounts it, the proxy's fast path calls it). Nest's guard chain then
 * runs on every route, in this order: ApiKeyGuard denies by default whatever the admission did not admit (a
 * route without @Public()), and PlanThrottlerGuard counts what the admission did not decide (never a /v1 request
 * twice) unless the route says @SkipThrottle().
 */
@Module({
  imports: [ConsumersModule, RateLimitModule, RoutingModule, UsageModule],
  providers: [
    AdmissionMiddleware,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_GUARD, useExisting: PlanThrottlerGuard },
  ],
  exports: [AdmissionMiddleware],
})
export class AuthModule {}
