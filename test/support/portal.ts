import { randomBytes } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { loadPortalConfig, PortalConfig } from '../../apps/portal/src/config/portal.config';
import { createPortalApp } from '../../apps/portal/src/create-portal-app';
import { adminCall, createGatewayTestDatabase, GatewayTestDatabase, GatewayUnderTest, startGateway } from './gateway';
import { RunningPets, startPetsService } from './pets-service';
import { SmtpSink, startSmtpSink } from './smtp-sink';
import { TOKEN_PRESETS } from './token-presets';

export interface PortalUnderTest {
  app: INestApplication;
  url: string;
  config: PortalConfig;
  close(): Promise<void>;
}

/**
 * A portal token made through the admin API, the way `npm run keys -- token create --for portal` does
 * (`actsForUsers: false`: one minted before the preset named developers in the audit).
 */
export async function createPortalToken(
  gateway: GatewayUnderTest,
  { actsForUsers = true }: { actsForUsers?: boolean } = {},
): Promise<string> {
  const reply = await adminCall(gateway, 'POST', '/tokens', {
    name: `portal-${randomBytes(3).toString('hex')}`,
    ...TOKEN_PRESETS.portal,
    actsForUsers,
  });
  if (reply.status !== 201) throw new Error(`portal token: ${reply.status} ${reply.text}`);
  return (reply.body as { token: string }).token;
}

/**
 * Starts the developer portal on a free loopback port, against `gateway`'s admin API with a portal token, its
 * tables in `database` (shared when several portals are started on one), mail to `smtpUrl`.
 */
export async function startPortal(options: {
  gateway: GatewayUnderTest;
  token: string;
  database: GatewayTestDatabase;
  smtpUrl: string;
  env?: Record<string, string>;
}): Promise<PortalUnderTest> {
  const config = loadPortalConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    PORTAL_PORT: '0',
    PORTAL_ADMIN_TOKEN: options.token,
    ADMIN_URL: options.gateway.adminUrl,
    PORTAL_DATABASE_URL: options.database.url,
    PORTAL_API_URL: `${options.gateway.url}/v1`,
    SMTP_URL: options.smtpUrl,
    PORTAL_SESSION_SECRET: 'test-session-secret-test-session-secret',
    ...options.env,
  });
  const app = await createPortalApp(config);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const url = `http://127.0.0.1:${port}`;
  // The links in mails name the public address: here, this very instance.
  config.publicUrl = options.env?.PORTAL_PUBLIC_URL ?? url;
  return { app, url, config, close: () => app.close() };
}

/** What the portal's tests stand on: pets, a gateway, the portal's own database, a mail sink and the portal(s). */
export interface PortalStack {
  pets: RunningPets;
  gateway: GatewayUnderTest;
  database: GatewayTestDatabase;
  smtp: SmtpSink;
  /** The first portal instance. */
  portal: PortalUnderTest;
  /** Every instance, on one database and one token (a fleet behind a balancer). */
  portals: PortalUnderTest[];
  close(): Promise<void>;
}

/** Starts a portal stack; a part that fails to start stops the parts already started. */
export async function startPortalStack(
  options: { gatewayEnv?: Record<string, string>; portalEnv?: Record<string, string>; instances?: number } = {},
): Promise<PortalStack> {
  const started: Array<{ close(): Promise<void> | void }> = [];
  const close = async () => {
    for (const part of started.reverse()) await part.close();
  };
  try {
    const pets = await startPetsService();
    started.push(pets);
    const gateway = await startGateway({ petsUrl: pets.url, env: options.gatewayEnv });
    started.push(gateway);
    const database = await createGatewayTestDatabase();
    started.push({ close: () => database.drop() });
    const smtp = await startSmtpSink();
    started.push(smtp);
    const token = await createPortalToken(gateway);
    const portals: PortalUnderTest[] = [];
    for (let i = 0; i < (options.instances ?? 1); i += 1) {
      const portal = await startPortal({ gateway, token, database, smtpUrl: smtp.url, env: options.portalEnv });
      started.push(portal);
      portals.push(portal);
    }
    return { pets, gateway, database, smtp, portal: portals[0], portals, close };
  } catch (error) {
    await close();
    throw error;
  }
}
