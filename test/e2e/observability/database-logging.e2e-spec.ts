import { DataSource } from 'typeorm';
import { GATEWAY_DATA_SOURCE } from '../../../apps/gateway/src/database/data-source.options';
import { adminCall, mintKey } from '../../support/gateway';
import { call, expectErrorBody } from '../../support/http';
import { withStack } from '../../support/with-stack';

/**
 * A failed query (a duplicate consumer name: a normal 400; a pets table that is gone: a 500) is logged through
 * the app's JSON logger, with the statement and the database's reason but never its parameters (a consumer's
 * name, an animal's name), and nothing is written to the console beside the JSON lines.
 */
describe('TypeORM logging goes through the JSON logger, without query parameters', () => {
  const lines: string[] = [];
  const stack = withStack({
    pets: {},
    gateway: { env: { LOG_LEVEL: 'warn' }, logDestination: { write: (line: string) => void lines.push(line) } },
  });

  let consoleLines: string[];
  const spies: jest.SpyInstance[] = [];

  beforeEach(() => {
    consoleLines = [];
    lines.length = 0;
    for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      spies.push(
        jest
          .spyOn(console, method)
          .mockImplementation((...args: unknown[]) => void consoleLines.push(args.map(String).join(' '))),
      );
    }
  });
  afterEach(() => {
    for (const spy of spies.splice(0)) spy.mockRestore();
  });

  it('a duplicate consumer name: a 409, one JSON warning naming the statement, no parameters, nothing on the console', async () => {
    await mintKey(stack.gateway, 'free', 'dup-secret-name-7f3a');
    const reply = await adminCall(stack.gateway, 'POST', '/consumers', { plan: 'pro', name: 'dup-secret-name-7f3a' });
    expectErrorBody(reply, 409, 'CONSUMER_EXISTS');
    expect(consoleLines.filter((line) => /query failed|INSERT INTO/i.test(line))).toEqual([]);
    const logged = lines.map((line) => JSON.parse(line) as { level: number; context?: string; msg: string });
    const failed = logged.filter((entry) => entry.context === 'TypeORM');
    expect(failed).toHaveLength(1);
    expect(failed[0].msg).toMatch(/^Query failed \(23505\): .*INSERT INTO "gateway"\."consumers"/);
    // A unique violation the app turns into a 409: a warning, not an error.
    expect(failed[0].level).toBe(40);
    expect(lines.join('\n')).not.toContain('dup-secret-name-7f3a');
  });

  it('a pets query that fails: logged without the animal the client sent', async () => {
    const key = await mintKey(stack.gateway, 'pro');
    const dataSource = stack.pets.app.get(DataSource);
    await dataSource.query('ALTER TABLE pets RENAME TO pets_away');
    try {
      const reply = await call(`${stack.gateway.url}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Secret-Animal-41c9', categoryId: 1 }),
      });
      expect(reply.status).toBeGreaterThanOrEqual(500);
    } finally {
      await dataSource.query('ALTER TABLE pets_away RENAME TO pets');
    }
    expect(consoleLines.filter((line) => /query failed|INSERT INTO/i.test(line))).toEqual([]);
    expect(consoleLines.join('\n')).not.toContain('Secret-Animal-41c9');
    // In this one test process Nest's logger is the last app's (the gateway's): the pets line lands there.
    const failed = lines
      .map((line) => JSON.parse(line) as { context?: string; msg: string })
      .filter((entry) => entry.context === 'TypeORM');
    expect(failed.map((entry) => entry.msg)).toEqual([
      expect.stringMatching(/^Query failed \(42P01\): INSERT INTO "pets"/),
    ]);
    expect(lines.join('\n')).not.toContain('Secret-Animal-41c9');
  });

  it('both apps give TypeORM the JSON logger', () => {
    const gatewayLogger = stack.gateway.app.get<DataSource>(`${GATEWAY_DATA_SOURCE}DataSource`).logger;
    const petsLogger = stack.pets.app.get(DataSource).logger;
    expect(gatewayLogger.constructor.name).toBe('TypeOrmJsonLogger');
    expect(petsLogger.constructor.name).toBe('TypeOrmJsonLogger');
  });
});
