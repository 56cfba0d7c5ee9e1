import { ApiError } from '@app/errors';
import { CallHandler, ExecutionContext, HttpException, Injectable, NestInterceptor } from '@nestjs/common';
import { catchError, Observable } from 'rxjs';
import { DATABASE_UNAVAILABLE_MESSAGE } from '../admin-conventions/admin-responses';

/**
 * A database that is away rather than wrong: SQLSTATE connection exceptions (08), operator intervention (57P),
 * insufficient resources (53), or a client-side connection failure.
 */
const UNAVAILABLE_SQLSTATE = /^(08|57P|53)/;
const UNAVAILABLE_MESSAGE =
  /ECONNREFUSED|ECONNRESET|Connection terminated|timeout exceeded|connect ETIMEDOUT|not currently accepting connections/i;

function isDatabaseAway(error: unknown): boolean {
  if (error instanceof HttpException) return false;
  const code =
    (error as { code?: unknown; driverError?: { code?: unknown } }).driverError?.code ??
    (error as { code?: unknown }).code;
  return (
    (typeof code === 'string' && UNAVAILABLE_SQLSTATE.test(code)) ||
    UNAVAILABLE_MESSAGE.test((error as Error)?.message ?? '')
  );
}

/** While the consumers database is unreachable, the admin API answers 503 (retry later), not a 500. */
@Injectable()
export class DatabaseUnavailableInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((error: unknown) => {
        if (isDatabaseAway(error))
          throw new ApiError('SERVICE_UNAVAILABLE', DATABASE_UNAVAILABLE_MESSAGE, { 'Retry-After': '5' });
        throw error;
      }),
    );
  }
}
