import { HttpException } from '@nestjs/common';
import { ApiError, ErrorBody } from './api-error';
import { DEFAULT_CODE_FOR_STATUS, ErrorCode } from './error-codes';

/** What the filter sends: a status, the Error body and any headers that belong to the error. */
export interface ErrorResponse {
  body: ErrorBody;
  headers: Readonly<Record<string, string>>;
  /** Unexpected errors are logged with their stack; client errors are not. */
  unexpected: boolean;
}

/** Errors raised by body-parser (via raw-body / http-errors) carry a `type` and a `status`. */
interface BodyParserError {
  type: string;
  status?: number;
  statusCode?: number;
  limit?: number;
  charset?: string;
  encoding?: string;
}

const GENERIC_500: ErrorBody = {
  code: 'INTERNAL_ERROR',
  message: 'An unexpected error occurred.',
  status: 500,
};

/** The `type` of the error raised when a JSON body is not valid UTF-8 (see json-body.ts). */
export const INVALID_UTF8_TYPE = 'entity.charset.invalid';

/**
 * A decompression failure (a body that does not match its Content-Encoding): body-parser passes zlib's error
 * on with status 400 and zlib's `code` and `errno`, but no `type`.
 */
function isDecodingError(error: unknown): error is { code: string; status: number } {
  if (typeof error !== 'object' || error === null || error instanceof HttpException) return false;
  const candidate = error as { status?: unknown; errno?: unknown; code?: unknown };
  return candidate.status === 400 && typeof candidate.errno === 'number' && typeof candidate.code === 'string';
}

function isBodyParserError(error: unknown): error is BodyParserError {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as BodyParserError).type === 'string' &&
    typeof ((error as BodyParserError).status ?? (error as BodyParserError).statusCode) === 'number'
  );
}

function fromBodyParser(error: BodyParserError): ErrorBody | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return { code: 'MALFORMED_JSON', message: 'The request body is not valid JSON.', status: 400 };
    case 'entity.too.large':
      return {
        code: 'PAYLOAD_TOO_LARGE',
        message: `The request body exceeds the limit of ${error.limit ?? 'the configured'} bytes.`,
        status: 413,
      };
    case 'charset.unsupported':
      return {
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: `Unsupported charset "${error.charset ?? ''}": send application/json in UTF-8.`,
        status: 415,
      };
    case 'encoding.unsupported':
      return {
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: `Unsupported content encoding "${error.encoding ?? ''}".`,
        status: 415,
      };
    case INVALID_UTF8_TYPE:
      return { code: 'MALFORMED_JSON', message: 'The request body is not valid UTF-8.', status: 400 };
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
    case 'stream.not.readable':
      return { code: 'MALFORMED_REQUEST', message: 'The request body could not be read.', status: 400 };
    default:
      return undefined;
  }
}

function messageOf(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  if (typeof message === 'string') return message;
  return exception.message;
}

/** Turns anything thrown while handling a request into the spec's Error body. */
export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof ApiError) {
    return { body: error.body, headers: error.headers, unexpected: false };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const code: ErrorCode | undefined = DEFAULT_CODE_FOR_STATUS[status];
    // A deliberate HttpException (a 404, a health check's 503) is an answer, not a failure to log.
    if (code && code !== 'INTERNAL_ERROR') {
      return { body: { code, message: messageOf(error), status }, headers: {}, unexpected: false };
    }
    return { body: GENERIC_500, headers: {}, unexpected: true };
  }
  if (isBodyParserError(error)) {
    const body = fromBodyParser(error);
    if (body) return { body, headers: {}, unexpected: false };
  }
  if (isDecodingError(error)) {
    return {
      body: {
        code: 'MALFORMED_REQUEST',
        message: 'The request body does not match its Content-Encoding.',
        status: 400,
      },
      headers: {},
      unexpected: false,
    };
  }
  return { body: GENERIC_500, headers: {}, unexpected: true };
}
