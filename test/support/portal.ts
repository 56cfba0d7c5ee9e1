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

/** How a portal token is minted: `actsForUsers` false for one minted before `--for portal` named developers. */
export interface PortalTokenOptions {
  actsForUsers?: boolean;
}

/**
 * A portal token made through the admin API, the way `npm run keys -- token create --for portal` does
 * (`actsForUsers: false`: one minted before the preset named developers in the audit).
 */
export async function createPortalToken(
  gateway: GatewayUnderTest,
  { actsForUsers = true }: PortalTokenOptions = {},
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
  /** Every instance, on one database: on one token (a fleet behind a balancer), or each on its own (`tokens`). */
  portals: PortalUnderTest[];
  close(): Promise<void>;
}

/**
 * Starts a portal stack; a part that fails to start stops the parts already started. `instances` portals share one
 * token (`--for portal`'s); with `tokens`, one portal per entry instead, each on a token of its own minted so.
 */
export async function startPortalStack(
  options: {
    gatewayEnv?: Record<string, string>;
    portalEnv?: Record<string, string>;
    instances?: number;
    tokens?: PortalTokenOptions[];
  } = {},
): Promise<PortalStack> {
  if (options.instances !== undefined && options.tokens !== undefined)
    throw new Error('startPortalStack: give instances (on one token) or tokens (one instance each), not both');
  const started: Array<{ close(): Promise<void> | void }> = [];
  const close = async () => {
    for (const part of started.reverse()) await part.close();
  };
  try {
    const pets = await startPetsService();
    started.push(pets);
    const gateway = await startGateway({ petsUrl: pets.url, env: options.gatewayEnv });
    started.push(gateway);
    const database = await createGatewayTestDatabase('empty');
    started.push({ close: () => database.drop() });
    const smtp = await startSmtpSink();
    started.push(smtp);
    const tokens: string[] = [];
    if (options.tokens) for (const minted of options.tokens) tokens.push(await createPortalToken(gateway, minted));
    else tokens.push(...Array<string>(options.instances ?? 1).fill(await createPortalToken(gateway)));
    const portals: PortalUnderTest[] = [];
    for (const token of tokens) {
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
