import { randomBytes } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { loadPortalConfig, PortalConfig } from '../../apps/portal/src/config/portal.config';
import { createPortalApp } from '../../apps/portal/src/create-portal-app';
import { adminCall, GatewayTestDatabase, GatewayUnderTest } from './gateway';

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
    scopes: [
      'consumers:read',
      'consumers:write',
      'keys:write',
      'usage:read',
      'plan-requests:read',
      'plan-requests:write',
    ],
    ownConsumersOnly: true,
    plans: ['free'],
    ...(actsForUsers ? { actsForUsers } : {}),
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
