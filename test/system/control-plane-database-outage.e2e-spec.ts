import { PGlite } from '@electric-sql/pglite';
import { PgliteWireServer } from '@app/database';
import { maintenanceQuery } from '../../scripts/throwaway-database';
import {
  adminCall,
  createGatewayTestDatabase,
  GatewayTestDatabase,
  GatewayUnderTest,
  mintKey,
  startGateway,
} from '../support/gateway';
import { call, expectErrorBody } from '../support/http';
import { RunningPets, startPetsService } from '../support/pets-service';

/** A consumers database this file may take away and bring back: never the shared server itself. */
interface Interruptible {
  url: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  drop(): Promise<void>;
}

async function interruptibleDatabase(): Promise<Interruptible> {
  if (!process.env.DATABASE_URL) {
    // Embedded: the PGlite lives on in this process; only its wire server goes away and comes back.
    const db = await PGlite.create('memory://');
    let server = new PgliteWireServer(db);
    const address = await server.listen();
    const port = Number(address.split(':')[1]);
    return {
      url: `postgres://postgres@${address}/postgres`,
      cut: () => server.close(),
      restore: async () => {
        server = new PgliteWireServer(db);
        await server.listen(port);
      },
      drop: async () => {
        await server.close();
        await db.close();
      },
    };
  }
  // Server: a throwaway database whose connections are refused and terminated (the server keeps running).
  const database: GatewayTestDatabase = await createGatewayTestDatabase();
  const name = new URL(database.url).pathname.slice(1);
  const admin = (sql: string) => maintenanceQuery(process.env.DATABASE_URL!, sql);
  return {
    url: database.url,
    cut: async () => {
      await admin(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
      await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
    },
    restore: () => admin(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`),
    drop: async () => {
      await admin(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
      await database.drop();
    },
  };
}

/** The consumers database goes away under traffic: cached keys keep working, nothing answers 500. */
describe('control plane while the consumers database is unreachable', () => {
  let pets: RunningPets;
  let database: Interruptible;
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    pets = await startPetsService();
    database = await interruptibleDatabase();
    // A short TTL, so that the cached key is past it (stale) while the database is away; an anonymous window of
    // 3 a minute, so that a 503 counted against the address would show as 429 within the outage.
    gateway = await startGateway({
      petsUrl: pets.url,
      database,
      env: { KEY_CACHE_TTL_MS: '200', KEY_NEGATIVE_CACHE_TTL_MS: '200', ANON_RATE_LIMIT_PER_MINUTE: '3' },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
    await pets?.close();
  });

  it('serves cached keys, answers 503 for keys it cannot check, and recovers when the database returns', async () => {
    const known = await mintKey(gateway, 'business', 'known');
    const unseen = await mintKey(gateway, 'business', 'unseen');
    expect(
      (await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${known}` } })).status,
    ).toBe(200);

    await database.cut();
    await new Promise((resolve) => setTimeout(resolve, 400));
    for (let i = 0; i < 5; i += 1) {
      expect(
        (await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${known}` } })).status,
      ).toBe(200);
    }
    const refused = await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${unseen}` } });
    expectErrorBody(refused, 503, 'SERVICE_UNAVAILABLE');
    expect(refused.headers.get('retry-after')).toBe('5');
    // Each of these 503s is uncounted: three times the anonymous window later, still 503, never 429 or a ban.
    for (let i = 0; i < 9; i += 1) {
      const again = await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${unseen}` } });
      expectErrorBody(again, 503, 'SERVICE_UNAVAILABLE');
    }
    expectErrorBody(await adminCall(gateway, 'POST', '/consumers', { plan: 'free' }), 503, 'SERVICE_UNAVAILABLE');
    expectErrorBody(await adminCall(gateway, 'GET', '/consumers'), 503, 'SERVICE_UNAVAILABLE');

    await database.restore();
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      status = (await call(`${gateway.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${unseen}` } }))
        .status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe(200);
    expect((await adminCall(gateway, 'GET', '/consumers/known')).status).toBe(200);
    // The address's anonymous window is whole: a request without a key is refused as such (401), not as over it.
    expectErrorBody(await call(`${gateway.url}/v1/pets?limit=1`), 401, 'UNAUTHORIZED');
  }, 60_000);
});
