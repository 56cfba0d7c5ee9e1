import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { AdminApiError } from './admin-api-error';
import { refusalText } from './refusals';
import { FormRefused } from './typed-views';

export interface ErrorPage {
  status: number;
  title: string;
  message: string;
  code?: string;
}

/**
 * The status of a page about an admin API error: its own for a refusal (4xx); for a failure of the admin API never
 * 500 (this app did not fail): 503 when it cannot be reached, 504 when it did not answer in time, 502 for any other
 * error it answered (docs/errors.md, "Pages").
 */
export function pageStatusOf(error: AdminApiError): number {
  if (error.status < 500) return error.status;
  if (error.code === 'ADMIN_UNREACHABLE') return 503;
  if (error.code === 'ADMIN_TIMEOUT') return 504;
  return 502;
}

/** What a page shows for an exception: an HttpException as it is, an admin API error by its code, anything else a plain 500. */
export function errorPage(exception: unknown): ErrorPage {
  if (exception instanceof AdminApiError) {
    const title =
      exception.status === 404
        ? 'Not found'
        : exception.status === 403
          ? 'Not allowed'
          : exception.status >= 500
            ? 'The admin API is unavailable'
            : 'The admin API refused';
    // The page's own sentence for the code: the admin API's message is never shown (it names its fields, not the page's).
    return { status: pageStatusOf(exception), title, message: refusalText(exception), code: exception.code };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const body = exception.getResponse();
    const raw = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : body;
    const message = Array.isArray(raw) ? raw.join('; ') : String(raw ?? exception.message);
    return { status, title: status === 404 ? 'Page not found' : 'Request refused', message };
  }
  return {
    status: 500,
    title: 'Something went wrong',
    message: 'The page could not be shown. The error was logged; try again.',
  };
}

/** Renders errors as pages (the layout's `error` view), a refused form as its own page again; never a stack trace. */
@Catch()
export class WebExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('WebExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (exception instanceof FormRefused) {
      if (!response.headersSent) response.status(exception.status).render(exception.view, exception.model);
      return;
    }
    const page = errorPage(exception);
    if (page.status >= 500 && !(exception instanceof AdminApiError))
      this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    if (response.headersSent) return;
    response.status(page.status).render('error', page);
  }
}
