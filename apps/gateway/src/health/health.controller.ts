import { Controller, Get, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorFunction, HealthIndicatorService } from '@nestjs/terminus';
import { Public } from '../request/public.decorator';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { RateLimitStore } from '../rate-limit/rate-limit-store';
import { RedisRateLimitStore } from '../rate-limit/redis-rate-limit.store';

/** Liveness and readiness, outside /v1, without authentication or rate limits. */
@ApiExcludeController()
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly store: RateLimitStore,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /** Ready: the pets service answers its own readiness, and Redis answers when it is configured. */
  @Get('ready')
  @HealthCheck()
  ready() {
    const checks: HealthIndicatorFunction[] = [() => this.petsReady()];
    const store = this.store;
    if (store instanceof RedisRateLimitStore) {
      checks.push(async () => {
        const indicator = this.indicators.check('redis');
        return (await store.ping()) ? indicator.up() : indicator.down('Redis does not answer');
      });
    }
    return this.health.check(checks);
  }

  private async petsReady() {
    const indicator = this.indicators.check('pets');
    try {
      const response = await fetch(`${this.config.petsUrl}/health/ready`, { signal: AbortSignal.timeout(2000) });
      return response.ok ? indicator.up() : indicator.down(`status ${response.status}`);
    } catch (error) {
      return indicator.down((error as Error).message);
    }
  }
}
