import { ApiError } from '@app/errors';
import type { Request } from 'express';
import { QueryFailedError, QueryRunnerAlreadyReleasedError } from 'typeorm';
import { classifyDatabaseOutage, databaseOutageTranslator } from './database-outage';

const pgError = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});
const request = (method: string) => ({ method }) as Request;

describe('classifyDatabaseOutage', () => {
  it.each([
    ['a refused connection', pgError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'), 'not-sent'],
    ['a pool that cannot connect in time', pgError('timeout exceeded when trying to connect'), 'not-sent'],
    [
      'a server starting up',
      new QueryFailedError('SELECT 1', [], pgError('the database system is starting up', '57P03')),
      'not-sent',
    ],
    [
      'a session killed before COMMIT',
      new QueryFailedError(
        'INSERT INTO "pets" ...',
        [],
        pgError('terminating connection due to administrator command', '57P01'),
      ),
      'not-sent',
    ],
    ['a query runner released by a connection error', new QueryRunnerAlreadyReleasedError(), 'not-sent'],
    [
      'a COMMIT whose answer was lost',
      new QueryFailedError('COMMIT', [], pgError('Connection terminated unexpectedly')),
      'lost',
    ],
  ])('%s is an outage (%s)', (_case, error, outage) => {
    expect(classifyDatabaseOutage(error)).toBe(outage);
  });

  it.each([
    ['a constraint violation', new QueryFailedError('INSERT', [], pgError('duplicate key', '23505'))],
    ['a pool closed on purpose', pgError('Cannot use a pool after calling end on the pool')],
    ['a bug', new TypeError('x is undefined')],
  ])('%s is not an outage', (_case, error) => {
    expect(classifyDatabaseOutage(error)).toBeUndefined();
  });
});

describe('databaseOutageTranslator', () => {
  it('answers 503 with Retry-After when the request is safe to repeat', () => {
    const error = databaseOutageTranslator(
      pgError('connect ECONNREFUSED', 'ECONNREFUSED'),
      request('POST'),
    ) as ApiError;
    expect(error.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(error.headers['Retry-After']).toBe('5');
  });

  it('answers a write whose COMMIT was cut off with 503 and no Retry-After: its outcome is unknown', () => {
    const lost = new QueryFailedError('COMMIT', [], pgError('Connection terminated unexpectedly'));
    const error = databaseOutageTranslator(lost, request('POST')) as ApiError;
    expect(error.body.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.headers['Retry-After']).toBeUndefined();
    expect(error.message).toContain('may or may not have been saved');
    expect((databaseOutageTranslator(lost, request('GET')) as ApiError).headers['Retry-After']).toBe('5');
  });
});
