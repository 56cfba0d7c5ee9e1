import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { INestApplication } from '@nestjs/common';
import type { DestinationStream } from 'pino';
import { Clock } from '../../apps/gateway/src/clock';
import { GatewayConfig, loadGatewayConfig } from '../../apps/gateway/src/config/gateway.config';
import { PgliteWireServer } from '@app/database';
import { Limits, loadPlans, PlanName, PlanTable } from '../../apps/gateway/src/plans/plans';
import { assembleGateway } from '../../apps/gateway/src/assemble-gateway';
import { createThrowawayDatabase } from '../../scripts/throwaway-database';
import { Fixture, newPglite, pgliteDataDir, poolAvailable, pooledDatabase, templateDatabase } from './fixtures';
import { call, Reply } from './http';

export const plans: PlanTable = loadPlans(join(__dirname, '../../gateway/plans.json'));

export { FakeClock } from './fake-clock';

/**
 * A consumers database that several gateway instances share: a fresh database on the server named by
 * DATABASE_URL, or an in-memory PGlite served over the wire protocol from this test process; either way a copy of
 * the run's migrated `gateway` fixture (test/support/fixtures.ts), or of an `empty` database (for the portal's and
 * the console's databases, and the tests of the migrations themselves).
 */
export interface GatewayTestDatabase {
  /** GATEWAY_DATABASE_URL for the instances. */
  url: string;
  drop(): Promise<void>;
}

export async function createGatewayTestDatabase(
  fixture: Extract<Fixture, 'gateway' | 'empty'> = 'gateway',
): Promise<GatewayTestDatabase> {
  const base = process.env.DATABASE_URL;
  const pooled = await pooledDatabase(fixture);
  if (pooled) return { url: pooled.url, drop: pooled.release };
  if (!base) {
    const db = await newPglite(fixture);
    const server = new PgliteWireServer(db);
    const address = await server.listen();
    return {
      url: `postgres://postgres@${address}/postgres`,
      drop: async () => {
        await server.close();
        await db.close();
      },
    };
  }
  const template = fixture === 'empty' ? undefined : templateDatabase(fixture);
  const database = await createThrowawayDatabase(base, 'gateway_test', { template });
  return { url: database.url, drop: database.drop };
}

export interface GatewayUnderTest {
  app: INestApplication;
  /** The admin API app, on its own loopback port. */
  admin: INestApplication;
  url: string;
  adminUrl: string;
  adminToken: string;
  config: GatewayConfig;
  close(): Promise<void>;
}

/**
 * Starts the real gateway and its admin API on free ports (of `host`, 127.0.0.1 by default). Consumers live in `database` when given (shared
 * with other instances), else in a database of its own (a fresh one on DATABASE_URL's server, or the embedded
 * in-memory PGlite), dropped on close. With REDIS_URL set, its counters live in that Redis under a prefix of
 * its own (or `keyPrefix`, to make several instances share them).
 */
export async function startGateway(options: {
  petsUrl: string;
  database?: GatewayTestDatabase;
  clock?: Clock;
  env?: Record<string, string>;
  adjust?: (config: GatewayConfig) => void;
  keyPrefix?: string;
  logDestination?: DestinationStream;
  /** The loopback address both apps listen on (127.0.0.1 unless given). */
  host?: string;
  /** The plan table (gateway/plans.json unless given). */
  plans?: PlanTable;
}): Promise<GatewayUnderTest> {
  // A database of its own: a template copy on DATABASE_URL's server, or one of the worker's pool; else (no pool)
  // the app's in-process PGlite, loaded from the fixture's dump.
  const own =
    options.database === undefined && (process.env.DATABASE_URL || poolAvailable())
      ? await createGatewayTestDatabase()
      : undefined;
  const databaseUrl = options.database?.url ?? own?.url;
  const adminToken = randomBytes(32).toString('base64url');
  const config = loadGatewayConfig({
    PETS_URL: options.petsUrl,
    LOG_LEVEL: 'error',
    NODE_ENV: 'test',
    METRICS_PORT: '0',
    ADMIN_PORT: '0',
    ADMIN_TOKEN: adminToken,
    // The development demo key is npm start's (its file is the checkout's .data/demo-api-key): never a test's.
    DEMO_KEY: 'false',
    GATEWAY_PGLITE_DATA_DIR: databaseUrl ? 'memory://' : pgliteDataDir('gateway'),
    ...(databaseUrl ? { GATEWAY_DATABASE_URL: databaseUrl } : {}),
    // A pooled embedded database gets the embedded default's two connections (one PGlite session behind them).
    ...(own && !process.env.DATABASE_URL ? { GATEWAY_DB_POOL_SIZE: '2' } : {}),
    REDIS_URL: process.env.REDIS_URL,
    REDIS_KEY_PREFIX:
      options.keyPrefix ?? `${process.env.REDIS_KEY_PREFIX ?? 'test:'}${randomBytes(6).toString('hex')}:`,
    ...options.env,
  });
  options.adjust?.(config);
  const { app, admin } = await assembleGateway({
    config,
    plans: options.plans ?? plans,
    clock: options.clock,
    logDestination: options.logDestination,
    adminToken: config.admin.token!,
  });
  const host = options.host ?? '127.0.0.1';
  await app.listen(0, host);
  await admin.listen(0, host);
  const { port } = app.getHttpServer().address() as { port: number };
  const { port: adminPort } = admin.getHttpServer().address() as { port: number };
  return {
    app,
    admin,
    config,
    url: `http://${host}:${port}`,
    adminUrl: `http://${host}:${adminPort}`,
    adminToken: config.admin.token!,
    close: async () => {
      await admin.close();
      await app.close();
      await own?.drop();
    },
  };
}

/** A call to a gateway's admin API with its token (`token: null` sends none). */
export function adminCall(
  gateway: Pick<GatewayUnderTest, 'adminUrl' | 'adminToken'>,
  method: string,
  path: string,
  body?: unknown,
  token: string | null = gateway.adminToken,
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return call(`${gateway.adminUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Creates a consumer through the admin API, the way `npm run keys -- create` does, and returns its key. */
export async function mintKey(
  gateway: Pick<GatewayUnderTest, 'adminUrl' | 'adminToken'>,
  plan: PlanName,
  name = `c-${randomBytes(4).toString('hex')}`,
  limits?: Limits,
): Promise<string> {
  const reply = await adminCall(gateway, 'POST', '/consumers', { name, plan, ...(limits ? { limits } : {}) });
  if (reply.status !== 201) throw new Error(`mintKey: ${reply.status} ${reply.text}`);
  return (reply.body as { key: { key: string } }).key.key;
}
