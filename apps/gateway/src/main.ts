import '@app/platform/require-supported-node'; // first: on an older Node, one line and exit 1 before anything loads
import '@app/platform/tracing/register-edge'; // next: tracing must patch modules before they load
import { ConfigurationError, exitGracefullyOnSignals, listenOrExplain } from '@app/platform';
import { Logger } from '@nestjs/common';
import { resolveAdminToken } from './admin/admin-token';
import { adminUrlFile, localUrl, publishAdminUrl } from './admin/admin-url-file';
import { assembleGateway } from './assemble-gateway';
import { loadPlans } from './plans/plans';
import { loadGatewayConfig } from './config/gateway.config';

async function bootstrap(): Promise<void> {
  const config = loadGatewayConfig();
  const plans = loadPlans(config.plansFile);
  const adminToken = resolveAdminToken(config);
  const { app, admin } = await assembleGateway({ config, plans, adminToken });
  await listenOrExplain(admin, config.admin.port, config.admin.host, 'ADMIN_PORT');
  await listenOrExplain(app, config.port, config.host, 'PORT');
  // With the development token file (no ADMIN_TOKEN, never in production), where the admin API listens, beside
  // it: `npm run keys` reads both. Written once both ports listen: a start that fails leaves none behind.
  const usesTokenFile = !config.production && !config.admin.token;
  const forgetAdminUrl = usesTokenFile
    ? publishAdminUrl(
        adminUrlFile(config.admin.tokenFile),
        localUrl(config.admin.host, admin.getHttpServer().address()),
      )
    : () => undefined;
  // The admin port stops taking requests first; the gateway then drains and closes the shared pool.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      forgetAdminUrl();
      void admin.close();
    });
  }
  exitGracefullyOnSignals(app, config.shutdownGraceMs, 'Gateway');
  const shown = config.host === '0.0.0.0' ? 'localhost' : config.host;
  const logger = new Logger('Gateway');
  logger.log(`Gateway on http://${shown}:${config.port}/v1, Swagger UI on http://${shown}:${config.port}/docs`);
  logger.log(
    `Admin API on http://${config.admin.host}:${config.admin.port} (Swagger UI at /docs); keep this port private`,
  );
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof ConfigurationError ? error.message : error);
  process.exit(1);
});
