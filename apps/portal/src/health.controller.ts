import { OutageLog, READINESS_CACHE_MS, SharedCheck } from '@app/platform';
import { Controller, Get, HttpStatus, Logger, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DataSource } from 'typeorm';

/** The readiness body: as the gateway's and the pets service's (Terminus) say it, for probes that read it. */
export type PortalReadiness = { status: 'ok' } | { status: 'error'; error: { database: { status: 'down' } } };

/**
 * Readiness for npm start and balancers: the portal answers and its database does. The route is public, so the
 * database is asked at most once a second however often it is probed, and an outage is logged once.
 */
@Controller('health')
export class HealthController {
  private readonly outages = new OutageLog(new Logger('Readiness'));
  private readonly databaseUp = new SharedCheck<boolean>(READINESS_CACHE_MS, () => this.databaseAnswers());

  constructor(private readonly dataSource: DataSource) {}

  /** JSON either way: a 503 written here, since the portal's exception filter renders HTML pages. */
  @Get('ready')
  async ready(@Res({ passthrough: true }) response: Response): Promise<PortalReadiness> {
    if (await this.databaseUp.run()) return { status: 'ok' };
    response.status(HttpStatus.SERVICE_UNAVAILABLE);
    return { status: 'error', error: { database: { status: 'down' } } };
  }

  private async databaseAnswers(): Promise<boolean> {
    try {
      await this.dataSource.query('SELECT 1');
      this.outages.report('The database', true);
      return true;
    } catch (error) {
      this.outages.report('The database', false, (error as Error).message);
      return false;
    }
  }
}
