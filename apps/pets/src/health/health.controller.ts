import { OutageLog, READINESS_CACHE_MS, SharedCheck } from '@app/platform';
import { Controller, Get, Logger } from '@nestjs/common';
import { HealthCheck, HealthCheckResult, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';

/** Liveness, and readiness meaning "the database answers" (asked at most once a second, outages logged once). */
@Controller('health')
export class HealthController {
  private readonly outages = new OutageLog(new Logger('Readiness'));
  private readonly readiness = new SharedCheck<HealthCheckResult>(READINESS_CACHE_MS, () =>
    this.health.check([() => this.databaseReady()]),
  );

  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
  ) {}

  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.readiness.run();
  }

  private async databaseReady() {
    const result = await this.database.pingCheck('database', { timeout: 2000 });
    const up = result.database?.status === 'up';
    this.outages.report('The database', up, up ? '' : String(result.database?.message ?? 'no answer'));
    return result;
  }
}
