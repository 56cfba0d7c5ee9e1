import { ApiError } from '@app/errors';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { catchError, Observable, throwError } from 'rxjs';
import { AuditLog } from '../access/audit-log';
import { adminContextOf, AdminRequest } from '../access/admin-request';

/**
 * A 403 that the repository decides (a token limited to its own consumers or to some plans, reaching beyond
 * them) goes to the audit log like the guard's own refusals: a row of its own within the minute's budget, else
 * counted on the minute's aggregate row (AuditLog.recordDenied); never dropped.
 */
@Injectable()
export class ForbiddenAuditInterceptor implements NestInterceptor {
  constructor(private readonly audit: AuditLog) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((error: unknown) => {
        if (!(error instanceof ApiError) || error.code !== 'FORBIDDEN') return throwError(() => error);
        const request = context.switchToHttp().getRequest<AdminRequest>();
        const route = `${request.method} ${(request.route as { path?: string } | undefined)?.path ?? request.path}`;
        const detail = { route: { before: null, after: route }, reason: { before: null, after: error.message } };
        void this.audit.recordDenied(adminContextOf(request), 403, detail);
        return throwError(() => error);
      }),
    );
  }
}
