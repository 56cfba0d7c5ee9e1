import { INestApplication } from '@nestjs/common';
import { createAdminApp } from './admin/create-admin-app';
import { ConsumersService } from './consumers/consumers.service';
import { createGatewayApp } from './create-gateway-app';
import { GatewayOptions } from './gateway-app.module';
import { mintDemoKeyIfNoConsumers } from './keys/demo-key';

/** The gateway as it runs: the public app and its admin API, built from one configuration, not yet listening. */
export interface AssembledGateway {
  app: INestApplication;
  admin: INestApplication;
}

/**
 * The one way the gateway is built, by main.ts and by the tests alike: the public app (its providers, the /v1
 * pipeline, the docs), the development demo key when configured and no consumer exists, then the admin API over
 * the same providers (one cache, one pool, one change channel) with `adminToken`.
 */
export async function assembleGateway(options: GatewayOptions & { adminToken: string }): Promise<AssembledGateway> {
  const { adminToken, ...gateway } = options;
  const app = await createGatewayApp(gateway);
  if (options.config.demoKey) await mintDemoKeyIfNoConsumers(options.config, app.get(ConsumersService));
  const admin = await createAdminApp(app, {
    token: adminToken,
    logLevel: options.config.logLevel,
    logDestination: options.logDestination,
  });
  return { app, admin };
}
