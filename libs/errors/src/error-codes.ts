/**
 * The finite set of `code` values an Error body can carry, with the HTTP status each one is sent with.
 * Clients branch on `code`; the README's error table and the OpenAPI `Error.code` enum derive from this map.
 */
export const ERROR_CODES = {
  VALIDATION_FAILED: 400,
  MALFORMED_JSON: 400,
  MALFORMED_REQUEST: 400,
  UNAUTHORIZED: 401,
  CONSUMER_DISABLED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  KEY_BANNED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_VALUES = Object.keys(ERROR_CODES) as ErrorCode[];

/**
 * Codes only the gateway's admin API sends (a token without the route's scope; a plan request decided twice): the
 * public contract never lists them.
 */
export const ADMIN_ONLY_ERROR_CODES: readonly ErrorCode[] = ['FORBIDDEN', 'CONFLICT'];

/** The codes of the public contract (the committed gateway/openapi.json and the pets service). */
export const PUBLIC_ERROR_CODE_VALUES = ERROR_CODE_VALUES.filter((code) => !ADMIN_ONLY_ERROR_CODES.includes(code));

/** The code used when only an HTTP status is known (for example a bare Nest HttpException). */
export const DEFAULT_CODE_FOR_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHORIZED',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  410: 'GONE',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  431: 'HEADERS_TOO_LARGE',
  500: 'INTERNAL_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};
