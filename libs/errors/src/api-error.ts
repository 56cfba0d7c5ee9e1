import { HttpException } from '@nestjs/common';
import { ERROR_CODES, ErrorCode } from './error-codes';

/** The Error body of the spec (2.5). */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
}

/**
 * An HttpException that carries a stable error code. Optional headers (Retry-After, WWW-Authenticate, Allow)
 * are set by the filter together with the body, so that a thrown error is a complete response.
 */
export class ApiError extends HttpException {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super({ code, message, status: ERROR_CODES[code] } satisfies ErrorBody, ERROR_CODES[code]);
  }

  get body(): ErrorBody {
    return { code: this.code, message: this.message, status: this.getStatus() };
  }
}
