import { ApiError } from '@app/errors';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { catchError, Observable, throwError } from 'rxjs';
import { currentActor } from '../consumers/admin-context';
import { AuditLog } from '../consumers/audit-log';

/**
 * A 403 that the repository decides (a token limited to its own consumers or to some plans, reaching beyond
 * them) goes to the audit log like the guard's own refusals: rate-limited per source address.
 */
@Injectable()
export class ForbiddenAuditInterceptor implements NestInterceptor {
  constructor(private readonly audit: AuditLog) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((error: unknown) => {
        if (!(error instanceof ApiError) || error.code !== 'FORBIDDEN') return throwError(() => error);
        const request = context.switchToHttp().getRequest<Request>();
        const route = `${request.method} ${(request.route as { path?: string } | undefined)?.path ?? request.path}`;
        const detail = { route: { before: null, after: route }, reason: { before: null, after: error.message } };
        void this.audit.recordDenied(403, detail, currentActor());
        return throwError(() => error);
      }),
    );
  }
}
