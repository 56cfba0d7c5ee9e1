import { jsonBodyMiddleware } from '@app/errors';
import {
  AppMetrics,
  HostAllowList,
  PinoLoggerService,
  configureHttpApp,
  createAppLogger,
  restrictHosts,
} from '@app/platform';
import type { Server } from 'node:http';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { PetsConfig } from './config/pets.config';
import { databaseOutageTranslator } from './database/database-outage';
import { requireInternalSecret } from './internal-secret.middleware';
import { PetsAppModule } from './pets-app.module';

/** Builds the pets service (not yet listening); main.ts and the tests share it. */
export async function createPetsApp(config: PetsConfig): Promise<INestApplication> {
  const logger = createAppLogger('pets', config.logLevel);
  const metrics = new AppMetrics('pets');
  const app = await NestFactory.create<NestExpressApplication>(PetsAppModule.forRoot(config, metrics), {
    bodyParser: false,
    logger: new PinoLoggerService(logger),
    abortOnError: false,
  });
  const secret = config.internalSecret;
  configureHttpApp(app, {
    body: [...(secret ? [requireInternalSecret(secret)] : []), ...jsonBodyMiddleware()],
    observability: { logger, metrics },
    errorTranslators: [databaseOutageTranslator],
    serverLimits: config.http,
  });
  try {
    await app.init();
    // Only the names it is reached by (PETS_ALLOWED_HOSTS) and loopback ones: a rebound name reaches nothing.
    restrictHosts(app.getHttpServer() as Server, new HostAllowList(config.allowedHosts ?? []), 'error-body');
    await metrics.serve(config.metrics.port, config.metrics.host, 'PETS_METRICS_PORT');
  } catch (error) {
    // Refusing to start (pending migrations, a taken port) must not leave pools or the embedded database open.
    await app.close().catch(() => undefined);
    throw error;
  }
  return app;
}
