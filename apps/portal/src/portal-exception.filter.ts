import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { href, WebExceptionFilter } from '@app/web';
import { KeyPending, SignInRequired } from './accounts/sign-in-required';

/**
 * The portal's pages on error: no signed-in account (SignInRequired, from SignedInGuard), a 303 to the sign-in page;
 * a signed-in account whose key has not come yet (KeyPending), a 303 to the page that says when it comes; anything
 * else as the library's filter does (a refused form its page again, an error its error page).
 */
@Catch()
export class PortalExceptionFilter implements ExceptionFilter {
  private readonly pages = new WebExceptionFilter();

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (exception instanceof SignInRequired) {
      if (!response.headersSent) response.redirect(303, href(String(response.locals.base ?? ''), '/login'));
      return;
    }
    if (exception instanceof KeyPending) {
      if (!response.headersSent) response.redirect(303, href(String(response.locals.base ?? ''), '/key'));
      return;
    }
    this.pages.catch(exception, host);
  }
}
