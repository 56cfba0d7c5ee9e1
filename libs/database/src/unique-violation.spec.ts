import { QueryFailedError } from 'typeorm';
import { isUniqueViolation } from './unique-violation';

describe('isUniqueViolation', () => {
  const failure = (code: string, constraint?: string) =>
    new QueryFailedError('INSERT', [], Object.assign(new Error('duplicate key'), { code, constraint }));

  it('recognises a unique violation, on any constraint or on the one named', () => {
    expect(isUniqueViolation(failure('23505', 'UQ_consumers_name'))).toBe(true);
    expect(isUniqueViolation(failure('23505', 'UQ_consumers_name'), 'UQ_consumers_name')).toBe(true);
    expect(isUniqueViolation(failure('23505', 'UQ_consumers_name'), 'UQ_plan_requests_one_pending')).toBe(false);
  });

  it('refuses other failures and things that are not query failures', () => {
    expect(isUniqueViolation(failure('23503', 'FK_keys_consumer'))).toBe(false);
    expect(isUniqueViolation(new Error('connection refused'))).toBe(false);
    expect(isUniqueViolation(undefined)).toBe(false);
  });
});
