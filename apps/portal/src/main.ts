import '@app/platform/require-supported-node'; // first: on an older Node, one line and exit 1 before anything loads
import { ConfigurationError, exitGracefullyOnSignals, listenOrExplain } from '@app/platform';
import { Logger } from '@nestjs/common';
import { loadPortalConfig } from './config/portal.config';
import { createPortalApp } from './create-portal-app';

async function bootstrap(): Promise<void> {
  const config = loadPortalConfig();
  const app = await createPortalApp(config);
  await listenOrExplain(app, config.port, config.host, 'PORTAL_PORT');
  exitGracefullyOnSignals(app, config.shutdownGraceMs, 'Portal');
  new Logger('Portal').log(
    `Developer portal listening on http://${config.host}:${config.port}${config.basePath}/ (public address ${config.publicUrl}${config.basePath}/)`,
  );
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof ConfigurationError ? error.message : error);
  process.exit(1);
});
