import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { Client } from 'pg';
import { canRunOwnPostgres, OwnPostgres } from '../support/own-postgres';
import {
  buildAppsIfMissing,
  dropDatabasesLeftBy,
  exitWithin,
  hasNginx,
  killLeftovers,
  leftoverProcesses,
  portsInUse,
  freeStackPorts,
  runStackCli,
  StackRun,
} from '../support/stack';
import { runIf } from '../support/skip';

async function status(url: string, headers: Record<string, string> = {}): Promise<number> {
  return (await fetch(url, { headers })).status;
}

async function databaseNames(serverUrl: string): Promise<string[]> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return (await client.query<{ datname: string }>('SELECT datname FROM pg_database')).rows.map((row) => row.datname);
  } finally {
    await client.end();
  }
}

/**
 * `npm run stack` listens where its variables say, honours REDIS_KEY_PREFIX, refuses the app variables it would
 * have to override, and needs no `test` database on its PostgreSQL server. docs/stack.md lists the variables.
 * Needs nginx and Redis, like test/system/stack.e2e-spec.ts (CI runs both in its Redis pass).
 */
const ifNginxAndRedis = runIf(hasNginx && process.env.REDIS_URL, 'nginx on PATH and REDIS_URL (a Redis server)');
ifNginxAndRedis.describe("the stack's variables", () => {
  const runs: StackRun[] = [];
  const start = (env: Record<string, string | undefined>) => {
    const run = runStackCli(env);
    runs.push(run);
    return run;
  };
  /** SIGTERM, as Ctrl-C would: exit 0, and nothing of the run left. */
  const stop = async (run: StackRun) => {
    run.child.kill('SIGTERM');
    expect((await exitWithin(run, 30_000)).code).toBe(0);
    expect(leftoverProcesses(run)).toEqual([]);
  };

  beforeAll(() => buildAppsIfMissing(), 120_000);
  afterEach(async () => {
    for (const run of runs.splice(0)) {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
      killLeftovers(run);
      await dropDatabasesLeftBy(run);
    }
  });

  it('listens on every port its variables give, keeps counters under REDIS_KEY_PREFIX, and frees them all on SIGTERM', async () => {
    const ports = await freeStackPorts(2);
    const prefix = `${process.env.REDIS_KEY_PREFIX ?? 'test:'}stack-vars-${ports.base}:`;
    // Random, as docs/configuration.md asks: the stack runs in production mode, which refuses a guessable token.
    const adminToken = randomBytes(32).toString('hex');
    const run = start({ ...ports.env, GATEWAY_INSTANCES: '2', REDIS_KEY_PREFIX: prefix, ADMIN_TOKEN: adminToken });
    await run.waitFor(/Ctrl-C stops everything/, 90_000);
    const key = /Free-plan key for this stack: (\S+)/.exec(run.output())![1];

    const local = (port: number, path: string) => `http://127.0.0.1:${port}${path}`;
    expect(await status(local(ports.nginx, '/v1/pets?limit=1'), { authorization: `Bearer ${key}` })).toBe(200);
    expect(await status(local(ports.pets, '/health/ready'))).toBe(200);
    expect(await status(local(ports.petsMetrics, '/metrics'))).toBe(200);
    for (const instance of [1, 2]) {
      const gateway = ports.gateway(instance);
      expect(await status(local(gateway.port, '/health/ready'))).toBe(200);
      // ADMIN_TOKEN from the environment is the admin APIs' token.
      expect(
        await status(local(gateway.adminPort, '/consumers?limit=1'), { authorization: `Bearer ${adminToken}` }),
      ).toBe(200);
      expect(await status(local(gateway.metricsPort, '/metrics'))).toBe(200);
    }
    const redisKeys = execFileSync('redis-cli', ['-u', process.env.REDIS_URL!, '--scan', '--pattern', `${prefix}*`])
      .toString()
      .trim();
    expect(redisKeys).not.toBe('');

    await stop(run);
    expect(await portsInUse(ports.all(2))).toEqual([]);
  }, 150_000);

  it.each([
    ['PORT', '3000', 'STACK_GATEWAY_PORT_BASE'],
    ['ADMIN_PORT', '3002', 'STACK_ADMIN_PORT_BASE'],
    ['METRICS_PORT', '9464', 'STACK_METRICS_PORT_BASE'],
    ['PETS_PORT', '3001', 'STACK_PETS_PORT'],
  ])('refuses %s=%s from the environment in one line naming %s, starting nothing', async (name, value, instead) => {
    const ports = await freeStackPorts(2);
    const run = start({ ...ports.env, [name]: value });
    const { code } = await exitWithin(run, 15_000);
    expect(code).toBe(1);
    const lines = run.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(
      lines[0].startsWith(
        `stack: ${name} is set (${value}), but the stack sets it for each app it starts: unset it and use ${instead}`,
      ),
    ).toBe(true);
    expect(leftoverProcesses(run)).toEqual([]);
  });

  it('names the variable of a port of its plan that is taken, before starting anything', async () => {
    const ports = await freeStackPorts(2);
    const taken = ports.gateway(2).adminPort;
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(taken, '127.0.0.1', resolve));
    try {
      const run = start({ ...ports.env, GATEWAY_INSTANCES: '2' });
      expect((await exitWithin(run, 15_000)).code).toBe(1);
      expect(run.output().trim()).toBe(
        `stack: STACK_ADMIN_PORT_BASE: port ${taken} (gateway-2's admin API) is already in use on 127.0.0.1: set STACK_ADMIN_PORT_BASE to a free port`,
      );
      expect(leftoverProcesses(run)).toEqual([]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  const ifOwnPostgres = runIf(canRunOwnPostgres, "PostgreSQL's initdb and pg_ctl (the test starts its own server)");
  ifOwnPostgres.it(
    "creates and drops its database through the server's postgres database: no `test` database needed",
    async () => {
      // A server of its own, as initdb makes it: postgres, template0 and template1, no `test`.
      const server = await OwnPostgres.create();
      try {
        expect(await databaseNames(server.url)).not.toContain('test');
        const ports = await freeStackPorts(2);
        const run = start({
          ...ports.env,
          GATEWAY_INSTANCES: '1',
          DATABASE_URL: undefined,
          STACK_POSTGRES_URL: server.url,
        });
        await run.waitFor(/Ctrl-C stops everything/, 90_000);
        const database = /database +(stack_\d+_\d+), created through (\S+)/.exec(run.output());
        expect(database?.[2]).toBe(server.url);
        expect(await databaseNames(server.url)).toContain(database![1]);
        // Consumers and pets live there: the key minted at start works through nginx.
        const key = /Free-plan key for this stack: (\S+)/.exec(run.output())![1];
        expect(
          await status(`http://127.0.0.1:${ports.nginx}/v1/pets?limit=1`, { authorization: `Bearer ${key}` }),
        ).toBe(200);

        await stop(run);
        expect(await databaseNames(server.url)).not.toContain(database![1]);
      } finally {
        server.destroy();
      }
    },
    150_000,
  );
});
