import { AdminApiError, endSession, href, WebExceptionFilter } from '@app/web';
import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { SignInRequired } from './auth/sign-in-required';

/**
 * The console's pages on error: no session, to the sign-in page; a 401 from the admin API (the operator's token
 * revoked or expired), the session ends and the sign-in page says why; anything else as the library's filter does
 * (a refused form its page again, an error its error page).
 */
@Catch()
export class ConsoleExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Console');
  private readonly pages = new WebExceptionFilter();

  async catch(exception: unknown, host: ArgumentsHost): Promise<void> {
    const request = host.switchToHttp().getRequest<Request>();
    const response = host.switchToHttp().getResponse<Response>();
    if (response.headersSent) return;
    const base = String(response.locals.base ?? '');
    if (exception instanceof SignInRequired) {
      response.redirect(303, href(base, '/sign-in'));
      return;
    }
    if (exception instanceof AdminApiError && exception.status === 401) {
      // A person's session credential lives ADMIN_OIDC_SESSION_MINUTES: past it, they sign in again (docs/sso.md).
      const person = request.session?.operator?.person !== undefined;
      if (request.session?.operator) {
        this.logger.log(
          `session of token "${request.session.operator.name}" ended: the admin API no longer accepts the token`,
        );
        await endSession(request, response).catch(() => undefined);
      }
      response.redirect(303, href(base, person ? '/sign-in?ended=sso' : '/sign-in?ended=1'));
      return;
    }
    this.pages.catch(exception, host);
  }
}
