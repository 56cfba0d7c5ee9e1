import { HttpException } from '@nestjs/common';
import { ERROR_CODES, ErrorCode } from './error-codes';

/** Machine-readable facts about an error, on the codes that document them (WEBHOOK_TARGET_REFUSED: `reason`). */
export type ErrorDetails = Readonly<Record<string, string>>;

/** The Error body of the spec (2.5); `details` only on the admin API's codes that document them. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
  details?: ErrorDetails;
}

/**
 * An HttpException that carries a stable error code. Optional headers (Retry-After, WWW-Authenticate, Allow)
 * are set by the filter together with the body, so that a thrown error is a complete response; optional details
 * go in the body, for a client to branch on (never on the message).
 */
export class ApiError extends HttpException {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    readonly details?: ErrorDetails,
  ) {
    super(
      { code, message, status: ERROR_CODES[code], ...(details ? { details } : {}) } satisfies ErrorBody,
      ERROR_CODES[code],
    );
  }

  get body(): ErrorBody {
    return {
      code: this.code,
      message: this.message,
      status: this.getStatus(),
      ...(this.details ? { details: this.details } : {}),
    };
  }
}
