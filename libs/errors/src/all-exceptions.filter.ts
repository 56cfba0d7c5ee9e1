import { ArgumentsHost, Catch, ExceptionFilter, Logger, NotFoundException } from '@nestjs/common';
import type { Express, Request, Response } from 'express';
import { ApiError } from './api-error';
import { allowedMethods } from './allowed-methods';
import { ErrorResponse, toErrorResponse } from './http-error-mapping';
import { writeError } from './write-error';

/**
 * Turns an error only an app can recognise (a lost database connection, say) into the ApiError it stands for;
 * returns undefined for anything else. Apps register theirs with the filter, so that the mapping lives with the
 * dependency it knows about and every route gets it, rather than each service method catching on its own.
 */
export type ErrorTranslator = (exception: unknown, request: Request) => ApiError | undefined;

/**
 * The one place where anything thrown becomes the spec's `{code, message, status}` body.
 * Client errors are answered as they are; anything unexpected becomes a generic 500 and its details go to
 * the log with the request id, never to the client.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(
    private readonly expressApp: Express,
    private readonly translators: readonly ErrorTranslator[] = [],
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const error = this.resolve(exception, request);

    if (error.unexpected) {
      const requestId = request.headers['x-request-id'];
      this.logger.error(
        `${request.method} ${request.path} failed (request id ${String(requestId ?? '-')})`,
        exception instanceof Error ? exception.stack : String(exception),
      );
    }
    writeError(response, error);
  }

  private resolve(exception: unknown, request: Request): ErrorResponse {
    for (const translate of this.translators) {
      const translated = translate(exception, request);
      if (translated) return toErrorResponse(translated);
    }
    // No route matched: either a wrong method or an unknown path.
    return toErrorResponse(
      exception instanceof NotFoundException && isUnmatched(request)
        ? unmatchedRouteError(this.expressApp, request)
        : exception,
    );
  }
}

/**
 * Whether Nest's not-found handler answered: express sets req.route only when a route matched, and under a
 * global prefix Nest's own not-found handler is a catch-all route `*path`.
 */
function isUnmatched(request: Request): boolean {
  return !request.route || request.route.path === '*path';
}

function unmatchedRouteError(expressApp: Express, request: Request): ApiError {
  // originalUrl, not path: inside a handler mounted under a prefix, path is relative to that prefix.
  const path = request.originalUrl.split('?')[0];
  return unmatchedRoute(request.method, path, allowedMethods(expressApp, path));
}

/**
 * The refusal of a request no route takes: 405 with `Allow` when the path has routes (`allow`, sorted), else 404.
 * One wording for every router that answers it (Express's here, the gateway's /v1 pipeline).
 */
export function unmatchedRoute(method: string, path: string, allow: readonly string[]): ApiError {
  return allow.length > 0
    ? new ApiError('METHOD_NOT_ALLOWED', `Method ${method} is not allowed on ${path}.`, { Allow: allow.join(', ') })
    : new ApiError('NOT_FOUND', `No route for ${method} ${path}.`);
}

/**
 * The last handler of an express app: a request that no route took gets the same 404/405 Error body, whatever
 * path prefix Nest mounted its own not-found handler under.
 */
export function unmatchedRouteHandler(expressApp: Express) {
  return (request: Request, response: Response): void => {
    writeError(response, toErrorResponse(unmatchedRouteError(expressApp, request)));
  };
}
