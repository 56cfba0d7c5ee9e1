import '@app/platform/require-supported-node'; // first: on an older Node, one line and exit 1 before anything loads
import '@app/platform/tracing/register-internal'; // next: tracing must patch modules before they load
import { ConfigurationError, exitGracefullyOnSignals, listenOrExplain } from '@app/platform';
import { Logger } from '@nestjs/common';
import { loadPetsConfig } from './config/pets.config';
import { createPetsApp } from './create-pets-app';

async function bootstrap(): Promise<void> {
  const config = loadPetsConfig();
  const app = await createPetsApp(config);
  await listenOrExplain(app, config.port, config.host, 'PETS_PORT');
  exitGracefullyOnSignals(app, config.shutdownGraceMs, 'Pets');
  new Logger('Pets').log(`Pets service listening on http://${config.host}:${config.port}`);
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigurationError) {
    console.error(error.message);
  } else {
    console.error(error);
  }
  process.exit(1);
});
