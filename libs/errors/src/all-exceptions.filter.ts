import { ArgumentsHost, Catch, ExceptionFilter, Logger, NotFoundException } from '@nestjs/common';
import type { Express, Request, Response } from 'express';
import { ApiError } from './api-error';
import { allowedMethods } from './allowed-methods';
import { ErrorResponse, toErrorResponse } from './http-error-mapping';
import { writeError } from './write-error';

/**
 * The one place where anything thrown becomes the spec's `{code, message, status}` body.
 * Client errors are answered as they are; anything unexpected becomes a generic 500 and its details go to
 * the log with the request id, never to the client.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(private readonly expressApp: Express) {}

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
    // No route matched (express sets req.route only on a match): either a wrong method or an unknown path.
    return toErrorResponse(
      exception instanceof NotFoundException && !request.route ? unmatchedRouteError(this.expressApp, request) : exception,
    );
  }
}

function unmatchedRouteError(expressApp: Express, request: Request): ApiError {
  const allow = allowedMethods(expressApp, request.path);
  return allow.length > 0
    ? new ApiError('METHOD_NOT_ALLOWED', `Method ${request.method} is not allowed on ${request.path}.`, { Allow: allow.join(', ') })
    : new ApiError('NOT_FOUND', `No route for ${request.method} ${request.path}.`);
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
