import '@app/platform/tracing/register-edge'; // first: tracing must patch modules before they load
import { ConfigurationError, exitGracefullyOnSignals, listenOrExplain } from '@app/platform';
import { Logger } from '@nestjs/common';
import { loadPlans } from './auth/plans';
import { mintDemoKeyIfNoConsumers } from './auth/demo-key';
import { loadGatewayConfig } from './config/gateway.config';
import { createGatewayApp } from './create-gateway-app';

async function bootstrap(): Promise<void> {
  const config = loadGatewayConfig();
  const plans = loadPlans(config.plansFile);
  if (config.demoKey) mintDemoKeyIfNoConsumers(config, plans);
  const app = await createGatewayApp({ config, plans });
  await listenOrExplain(app, config.port, config.host, 'PORT');
  exitGracefullyOnSignals(app, config.shutdownGraceMs, 'Gateway');
  const shown = config.host === '0.0.0.0' ? 'localhost' : config.host;
  new Logger('Gateway').log(`Gateway on http://${shown}:${config.port}/v1, Swagger UI on http://${shown}:${config.port}/docs`);
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof ConfigurationError ? error.message : error);
  process.exit(1);
});
