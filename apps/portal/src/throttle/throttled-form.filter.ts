import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { WebExceptionFilter } from '@app/web';

const FORMS: Record<string, { view: string; title: string }> = {
  '/login': { view: 'login', title: 'Sign in' },
  '/signup': { view: 'signup', title: 'Create an account' },
  '/reset': { view: 'reset', title: 'Reset your password' },
};

/** A throttled form comes back with the message and what was typed (never the password); other errors as usual. */
@Catch()
export class ThrottledFormFilter implements ExceptionFilter {
  private readonly fallback = new WebExceptionFilter();

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<Request>();
    const response = host.switchToHttp().getResponse<Response>();
    const form = FORMS[request.path];
    if (!(exception instanceof HttpException) || exception.getStatus() !== 429 || !form || response.headersSent)
      return this.fallback.catch(exception, host);
    const email = (request.body as { email?: unknown } | undefined)?.email;
    response.status(429).render(form.view, {
      title: form.title,
      email: typeof email === 'string' ? email : '',
      failed: exception.message,
    });
  }
}
