/**
 * The finite set of `code` values an Error body can carry, with the HTTP status each one is sent with.
 * Clients branch on `code`; the README's error table and the OpenAPI `Error.code` enum derive from this map.
 */
export const ERROR_CODES = {
  VALIDATION_FAILED: 400,
  MALFORMED_JSON: 400,
  MALFORMED_REQUEST: 400,
  WEBHOOK_TARGET_REFUSED: 400,
  UNAUTHORIZED: 401,
  CREDITS_EXHAUSTED: 402,
  CONSUMER_DISABLED: 401,
  FORBIDDEN: 403,
  INSUFFICIENT_SCOPE: 403,
  ADDRESS_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  CONSUMER_EXISTS: 409,
  KEY_ALREADY_ROTATED: 409,
  KEY_REVOKED: 409,
  KEY_EXPIRED: 409,
  KEY_LIMIT_REACHED: 409,
  KEY_OF_ANOTHER_CONSUMER: 409,
  CLIENT_ALREADY_BOUND: 409,
  PLAN_UNCHANGED: 409,
  PLAN_REQUEST_PENDING: 409,
  PLAN_REQUEST_DECIDED: 409,
  PLAN_REQUEST_STALE: 409,
  WEBHOOK_ENDPOINT_LIMIT: 409,
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
 * The admin API's conflicts (409): the request is well formed, but the state of what it names refuses it. Each has
 * a code of its own, so that a client branches on `code`, never on the message.
 */
export const CONFLICT_ERROR_CODES = [
  'CONSUMER_EXISTS',
  'KEY_ALREADY_ROTATED',
  'KEY_REVOKED',
  'KEY_EXPIRED',
  'KEY_LIMIT_REACHED',
  'KEY_OF_ANOTHER_CONSUMER',
  'CLIENT_ALREADY_BOUND',
  'PLAN_UNCHANGED',
  'PLAN_REQUEST_PENDING',
  'PLAN_REQUEST_DECIDED',
  'PLAN_REQUEST_STALE',
  'WEBHOOK_ENDPOINT_LIMIT',
] as const satisfies readonly ErrorCode[];

/**
 * Codes only the gateway's admin API sends (a token without the route's scope; a webhook URL the outbound policy
 * refuses; the conflicts): the public contract never lists them.
 */
export const ADMIN_ONLY_ERROR_CODES: readonly ErrorCode[] = [
  'FORBIDDEN',
  'WEBHOOK_TARGET_REFUSED',
  ...CONFLICT_ERROR_CODES,
];

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
