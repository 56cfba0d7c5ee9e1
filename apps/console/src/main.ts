import '@app/platform/require-supported-node'; // first: on an older Node, one line and exit 1 before anything loads
import { ConfigurationError, exitGracefullyOnSignals, listenOrExplain } from '@app/platform';
import { Logger } from '@nestjs/common';
import { loadConsoleConfig } from './config/console.config';
import { createConsoleApp } from './create-console-app';

async function bootstrap(): Promise<void> {
  const config = loadConsoleConfig();
  if (!config.databaseUrl) {
    throw new ConfigurationError(
      'Invalid configuration: CONSOLE_DATABASE_URL must be set (npm start sets it to its embedded database)',
    );
  }
  const app = await createConsoleApp(config);
  await listenOrExplain(app, config.port, config.host, 'CONSOLE_PORT');
  exitGracefullyOnSignals(app, config.shutdownGraceMs, 'Console');
  new Logger('Console').log(
    `Operator console on http://${config.host}:${config.port} (admin API ${config.adminUrl}); keep this port private`,
  );
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof ConfigurationError ? error.message : error);
  process.exit(1);
});
