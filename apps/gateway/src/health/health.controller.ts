import { OutageLog, READINESS_CACHE_MS, SharedCheck } from '@app/platform';
import { Controller, Get, Inject, Logger } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import {
  HealthCheck,
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorFunction,
  HealthIndicatorService,
} from '@nestjs/terminus';
import { Public } from '../auth/public.decorator';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { KeyCache } from '../keys/key-cache';
import { RateLimitStore } from '../rate-limit/rate-limit-store';

/**
 * How long a key lookup may take before this instance is not ready: a key it has never seen should be answered
 * within a second (issue #36), and one that waits longer on a connection will be better served elsewhere.
 */
export const UNSEEN_KEY_LOOKUP_WITHIN_MS = 1000;

/**
 * Liveness and readiness, outside /v1, without authentication (@Public) or rate limits (@SkipThrottle). Readiness asks the pets service
 * (a database query), the key lookup (a query on the consumers database through the lookups' own pool) and Redis
 * at most once a second however often it is probed, and a failing dependency is logged when it fails and when it
 * is back, not at every probe.
 */
@ApiExcludeController()
@Public()
@SkipThrottle()
@Controller('health')
export class HealthController {
  private readonly outages = new OutageLog(new Logger('Readiness'));
  private readonly readiness = new SharedCheck<HealthCheckResult>(READINESS_CACHE_MS, () => this.checkReadiness());

  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly store: RateLimitStore,
    private readonly keys: KeyCache,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /**
   * Ready: the pets service answers its own readiness, a key this instance has never seen can be looked up (the
   * lookup's query answers within UNSEEN_KEY_LOOKUP_WITHIN_MS), and Redis answers when it is configured.
   */
  @Get('ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.readiness.run();
  }

  private checkReadiness(): Promise<HealthCheckResult> {
    const checks: HealthIndicatorFunction[] = [() => this.petsReady(), () => this.keyLookupReady()];
    const { store } = this;
    const dependency = store.dependency;
    if (dependency !== null) {
      checks.push(async () => {
        const indicator = this.indicators.check(dependency.toLowerCase());
        const up = await store.ping();
        this.outages.report(dependency, up, up ? '' : 'it does not answer');
        return up ? indicator.up() : indicator.down(`${dependency} does not answer`);
      });
    }
    return this.health.check(checks);
  }

  private async keyLookupReady() {
    const indicator = this.indicators.check('keys');
    const problem = await this.keys.unseenKeyLookupProblem(UNSEEN_KEY_LOOKUP_WITHIN_MS);
    this.outages.report(
      'The key lookup',
      problem === undefined,
      problem === undefined ? '' : `${problem}: keys this instance has not seen wait, or get 503`,
    );
    return problem === undefined ? indicator.up() : indicator.down(problem);
  }

  private async petsReady() {
    const indicator = this.indicators.check('pets');
    let problem: string | undefined;
    try {
      const response = await fetch(`${this.config.petsUrl}/health/ready`, { signal: AbortSignal.timeout(2000) });
      if (!response.ok) problem = `status ${response.status}`;
    } catch (error) {
      problem = (error as Error).message;
    }
    this.outages.report('The pets service', problem === undefined, problem);
    return problem === undefined ? indicator.up() : indicator.down(problem);
  }
}
