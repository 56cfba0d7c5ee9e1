/** PostgreSQL's SQLSTATE for a unique violation (PGlite answers the same). */
const UNIQUE_VIOLATION = '23505';

/**
 * Whether a TypeORM query failed on a unique constraint: any, or the one named `constraint` (so that a
 * duplicate the caller expects is told apart from one it does not).
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const driverError = (error as { driverError?: { code?: string; constraint?: string } } | undefined)?.driverError;
  return driverError?.code === UNIQUE_VIOLATION && (constraint === undefined || driverError.constraint === constraint);
}
