import { INestApplication } from '@nestjs/common';
import { createPetsApp } from '../../apps/pets/src/create-pets-app';
import { GatewayUnderTest, mintKey, startGateway } from '../support/gateway';
import { Reply, call, expectErrorBody, postJson } from '../support/http';
import { OwnPostgres, canRunOwnPostgres } from '../support/own-postgres';
import { runIf } from '../support/skip';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * PostgreSQL restarted under POST load (a cluster of this test's own, stopped with `pg_ctl -m fast` as an operator
 * would): every answer is a 201 or a 503 SERVICE_UNAVAILABLE, never a 500; readiness goes down while it lasts;
 * the pool recovers by itself once the server is back.
 */
const ifOwnPostgres = runIf(canRunOwnPostgres, "PostgreSQL's initdb and pg_ctl (the test starts its own server)");
ifOwnPostgres.describe('a database outage', () => {
  let pg: OwnPostgres;
  let pets: INestApplication;
  let petsUrl: string;
  let gateway: GatewayUnderTest;
  let key: string;

  beforeAll(async () => {
    pg = await OwnPostgres.create();
    pets = await createPetsApp({
      port: 0,
      host: '127.0.0.1',
      databaseUrl: pg.url,
      pgliteDataDir: 'memory://',
      migrateOnStart: true,
      poolSize: 4,
      logLevel: 'error',
      metrics: { port: 0, host: '127.0.0.1' },
      shutdownGraceMs: 2000,
    });
    await pets.listen(0, '127.0.0.1');
    petsUrl = `http://127.0.0.1:${(pets.getHttpServer().address() as { port: number }).port}`;
    gateway = await startGateway({ petsUrl });
    key = await mintKey(gateway, 'enterprise', 'outage', { perMinute: 1_000_000, perDay: 10_000_000 });
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await pets?.close();
    pg?.destroy();
  });

  const auth = () => ({ authorization: `Bearer ${key}` });

  it('answers 503 with Retry-After (never 500) while PostgreSQL restarts, goes not-ready, and recovers by itself', async () => {
    const replies: Array<{ method: string; reply: Reply }> = [];
    let running = true;
    const worker = async (i: number) => {
      while (running) {
        const reply =
          i % 4 === 0
            ? await call(`${gateway.url}/v1/pets?limit=1`, { headers: auth() })
            : await postJson(`${gateway.url}/v1/pets`, { name: `Load ${i}`, categoryId: 1 }, auth());
        replies.push({ method: i % 4 === 0 ? 'GET' : 'POST', reply });
      }
    };
    const workers = Array.from({ length: 8 }, (_, i) => worker(i));
    await sleep(500);

    pg.stop('fast');
    await sleep(1500);
    const petsReady = await call(`${petsUrl}/health/ready`);
    const gatewayReady = await call(`${gateway.url}/health/ready`);
    const duringGet = await call(`${gateway.url}/v1/pets`, { headers: auth() });
    const duringPost = await postJson(`${gateway.url}/v1/pets`, { name: 'During', categoryId: 1 }, auth());

    pg.start();
    // The pool replaces its dead connections on demand: no restart of the service.
    let recovered: Reply | undefined;
    for (let attempt = 0; attempt < 100 && recovered?.status !== 201; attempt += 1) {
      recovered = await postJson(`${gateway.url}/v1/pets`, { name: 'After', categoryId: 1 }, auth());
      if (recovered.status !== 201) await sleep(100);
    }
    running = false;
    await Promise.all(workers);

    expect(petsReady.status).toBe(503);
    expect(gatewayReady.status).toBe(503);
    expectErrorBody(duringGet, 503, 'SERVICE_UNAVAILABLE');
    expect(duringGet.headers.get('retry-after')).toBe('5');
    // A POST that could not reach the database wrote nothing: safe to retry, so it says when.
    expectErrorBody(duringPost, 503, 'SERVICE_UNAVAILABLE');
    expect(duringPost.headers.get('retry-after')).toBe('5');

    const statuses = replies.map((r) => r.reply.status);
    expect(statuses.filter((s) => s !== 201 && s !== 200 && s !== 503)).toEqual([]);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
    for (const { method, reply } of replies.filter((r) => r.reply.status === 503)) {
      expectErrorBody(reply, 503, 'SERVICE_UNAVAILABLE');
      // Reads are always safe to repeat; a write without Retry-After is one whose COMMIT was cut off.
      if (method === 'GET') expect(reply.headers.get('retry-after')).toBe('5');
    }

    expect(recovered?.status).toBe(201);
    // Readiness answers are reused for a second: ready again within the next one or two.
    let ready = 503;
    for (let attempt = 0; attempt < 30 && ready !== 200; attempt += 1) {
      await sleep(100);
      ready = (await call(`${petsUrl}/health/ready`)).status;
    }
    expect(ready).toBe(200);
  }, 60_000);
});
