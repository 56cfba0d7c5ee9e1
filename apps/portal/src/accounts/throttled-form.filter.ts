import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { WebExceptionFilter } from '@app/web';
import { renderView, TITLES } from './accounts.views';

const FORMS: Record<string, 'login' | 'signup' | 'reset'> = {
  '/login': 'login',
  '/signup': 'signup',
  '/reset': 'reset',
};

/**
 * A throttled form (429 from SignInThrottlerGuard) comes back with the message and what was typed (never the
 * password); any other HTTP error is the library's error page. Anything else (a refused form, SignInRequired) goes
 * on to the portal's exception filter.
 */
@Catch(HttpException)
export class ThrottledFormFilter implements ExceptionFilter {
  private readonly fallback = new WebExceptionFilter();

  catch(exception: HttpException, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<Request>();
    const response = host.switchToHttp().getResponse<Response>();
    const form = FORMS[request.path];
    if (exception.getStatus() !== 429 || !form || response.headersSent) return this.fallback.catch(exception, host);
    const email = (request.body as { email?: unknown } | undefined)?.email;
    renderView(
      response,
      form,
      { title: TITLES[form], email: typeof email === 'string' ? email : '', failed: exception.message },
      429,
    );
  }
}
