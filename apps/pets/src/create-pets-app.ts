import { configureHttpApp, logLevelsFrom } from '@app/platform';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { PetsConfig } from './config/pets.config';
import { PetsAppModule } from './pets-app.module';

/** Builds the pets service (not yet listening); main.ts and the tests share it. */
export async function createPetsApp(config: PetsConfig): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(PetsAppModule.forRoot(config), {
    bodyParser: false,
    logger: logLevelsFrom(config.logLevel),
    abortOnError: false,
  });
  configureHttpApp(app);
  app.enableShutdownHooks();
  return app;
}
