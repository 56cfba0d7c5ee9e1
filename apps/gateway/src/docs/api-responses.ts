import { ErrorDto } from '@app/contract';
import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import type { HeadersObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/** Headers on every /v1 response (spec 8.3, plus the IETF fields and the request id). */
export const COMMON_RESPONSE_HEADERS: HeadersObject = {
  'X-RateLimit-Limit': {
    description: 'The request limit of the window closest to running out (per minute or per day).',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': { description: 'Requests remaining in that window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Unix timestamp (seconds) at which that window resets.', schema: { type: 'integer' } },
  'RateLimit-Policy': {
    description: 'Every window of the caller\'s plan (draft-ietf-httpapi-ratelimit-headers), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'Remaining requests (r) and seconds to reset (t) of every window, e.g. `"minute";r=59;t=60, "day";r=999;t=86400`.',
    schema: { type: 'string' },
  },
  'X-Request-Id': { description: 'The request id (the client\'s X-Request-Id when sent, else generated).', schema: { type: 'string' } },
};

export const RETRY_AFTER_HEADER: HeadersObject = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: a field, query parameter or path value breaks a rule (`VALIDATION_FAILED`), or the body is not valid JSON (`MALFORMED_JSON`).',
  401: 'Missing or invalid API key (`UNAUTHORIZED`). Carries `WWW-Authenticate: Bearer`.',
  404: 'The requested resource could not be found (`NOT_FOUND`).',
  410: 'The operation has been removed after its sunset date (`GONE`).',
  413: 'The request body is larger than 16 KiB (`PAYLOAD_TOO_LARGE`).',
  415: 'The request body is not `application/json` (`UNSUPPORTED_MEDIA_TYPE`).',
  429: 'Rate limit exceeded (`RATE_LIMITED`), or the key is temporarily banned for sending on after 429s (`KEY_BANNED`). Wait for `Retry-After` and back off exponentially.',
  502: 'The pets service failed to answer (`BAD_GATEWAY`).',
  503: 'The pets service is unavailable (`SERVICE_UNAVAILABLE`).',
  504: 'The pets service did not answer in time (`GATEWAY_TIMEOUT`).',
};

/** Error responses with the Error body and the common headers; 401 and 429 with their own headers. */
export function ApiErrorResponses(...statuses: number[]): MethodDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: ERROR_DESCRIPTIONS[status],
        type: ErrorDto,
        headers: {
          ...COMMON_RESPONSE_HEADERS,
          ...(status === 429 ? RETRY_AFTER_HEADER : {}),
          ...(status === 401
            ? { 'WWW-Authenticate': { description: 'RFC 6750 challenge: `Bearer realm="petstore"`.', schema: { type: 'string' } } }
            : {}),
        },
      }),
    ),
  );
}
