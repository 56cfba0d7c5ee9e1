import { Controller, Get, Header } from '@nestjs/common';
import { PublicPage } from './public-page.decorator';

/** Readiness for npm start and orchestrators: the console answers (it needs the admin API only per request). */
@Controller('health')
export class HealthController {
  @PublicPage()
  @Get('ready')
  @Header('Cache-Control', 'no-store')
  ready(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
