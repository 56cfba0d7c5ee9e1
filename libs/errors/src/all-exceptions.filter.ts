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
    if (exception instanceof NotFoundException && !request.route) {
      const allow = allowedMethods(this.expressApp, request.path);
      if (allow.length > 0) {
        return toErrorResponse(
          new ApiError('METHOD_NOT_ALLOWED', `Method ${request.method} is not allowed on ${request.path}.`, {
            Allow: allow.join(', '),
          }),
        );
      }
      return toErrorResponse(new ApiError('NOT_FOUND', `No route for ${request.method} ${request.path}.`));
    }
    return toErrorResponse(exception);
  }
}
