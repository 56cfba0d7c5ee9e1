import { Controller, Get } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** Readiness for npm start and balancers: the portal answers and its database does. */
@Controller('health')
export class HealthController {
  constructor(private readonly dataSource: DataSource) {}

  @Get('ready')
  async ready(): Promise<{ status: 'ok' }> {
    await this.dataSource.query('SELECT 1');
    return { status: 'ok' };
  }
}
