import { Logger } from '@nestjs/common';
import { TypeOrmJsonLogger } from './typeorm-json-logger';

describe('TypeOrmJsonLogger', () => {
  const calls: Array<[string, string]> = [];
  const spies: jest.SpyInstance[] = [];
  beforeEach(() => {
    calls.length = 0;
    for (const level of ['log', 'warn', 'error', 'debug'] as const) {
      spies.push(
        jest
          .spyOn(Logger.prototype, level)
          .mockImplementation((message: unknown, ..._rest: unknown[]) => void calls.push([level, String(message)])),
      );
    }
  });
  afterEach(() => spies.splice(0).forEach((spy) => spy.mockRestore()));

  const failure = (code: string, message: string) => Object.assign(new Error(message), { code });

  it('logs a failed query with its SQLSTATE, statement and reason, never its parameters', () => {
    new TypeOrmJsonLogger().logQueryError(
      failure('42P01', 'relation "pets" does not exist'),
      'INSERT INTO "pets"("name")\n   VALUES ($1)',
      ['Secret'],
    );
    expect(calls).toEqual([
      ['error', 'Query failed (42P01): INSERT INTO "pets"("name") VALUES ($1) -- relation "pets" does not exist'],
    ]);
  });

  it('logs a constraint violation (class 23, answered 400 by the apps) as a warning', () => {
    new TypeOrmJsonLogger().logQueryError(
      failure('23505', 'duplicate key value violates unique constraint "UQ_consumers_name"'),
      'INSERT INTO x VALUES ($1)',
      ['acme'],
    );
    expect(calls.map(([level]) => level)).toEqual(['warn']);
  });

  it('cuts long statements and logs nothing for queries that succeed', () => {
    const logger = new TypeOrmJsonLogger();
    logger.logQuery();
    logger.logQueryError('timeout', `SELECT ${'x, '.repeat(400)}1`);
    expect(calls).toHaveLength(1);
    expect(calls[0][1].length).toBeLessThan(600);
    expect(calls[0][1]).toMatch(/^Query failed: SELECT x, .*… -- timeout$/);
  });
});
