import { jsonBodyMiddleware } from '@app/errors';
import { configureHttpApp, logLevelsFrom } from '@app/platform';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { PetsConfig } from './config/pets.config';
import { requireInternalSecret } from './internal-secret.middleware';
import { PetsAppModule } from './pets-app.module';

/** Builds the pets service (not yet listening); main.ts and the tests share it. */
export async function createPetsApp(config: PetsConfig): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(PetsAppModule.forRoot(config), {
    bodyParser: false,
    logger: logLevelsFrom(config.logLevel),
    abortOnError: false,
  });
  const secret = config.internalSecret;
  configureHttpApp(app, { body: [...(secret ? [requireInternalSecret(secret)] : []), ...jsonBodyMiddleware()] });
  app.enableShutdownHooks();
  return app;
}
