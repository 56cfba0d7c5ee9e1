import { BODY_LIMIT_BYTES, ErrorBody, ErrorCode, ERROR_CODES } from '@app/errors';
import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import type { HeaderObject, HeadersObject, ReferenceObject, ResponseObject } from '@nestjs/swagger';
import { addressNotAllowedMessage } from '../auth/api-key-authenticator';
import { API_CACHE_CONTROL } from '../routing/api-cache-control';

/**
 * Response headers, declared once as components and referenced from every response, so that the document (and
 * Swagger UI) describes each header in one place. `required` says what a client can count on.
 */
export const HEADER_COMPONENTS: Record<string, HeaderObject> = {
  'X-RateLimit-Limit': {
    description:
      'Rate limit: the quota of the request window nearest exhaustion (minute, day or billing month; on a 429, the violated one); never the credits (see `RateLimit`).',
    required: true,
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description: 'Rate limit: requests remaining in that window; 0 on every refusal (429, 402, 503).',
    required: true,
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description:
      'Rate limit: the Unix second (rounded up) at which that window resets; on a 429 or 503, when a request can pass (`Retry-After`).',
    required: true,
    schema: { type: 'integer' },
  },
  'RateLimit-Policy': {
    description:
      'Rate limit: every policy in force for the caller (draft-ietf-httpapi-ratelimit-headers-11): quota `q` per window `w` seconds, e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`, and `"month";q=200000;w=2592000` when a monthly quota applies (`w`: the seconds of the current billing period); with prepaid credits `"credits";q=1000;w=86400` (q: the refill amount in credits, w: the refill period; no `qu`: the draft\'s default unit, each request consuming its operation\'s cost) or, without a refill, `"credits";q=<balance>`.',
    required: true,
    schema: { type: 'string' },
  },
  RateLimit: {
    description:
      'Rate limit: the policy nearest exhaustion, credits included, with its remaining requests (r) and whole seconds to its reset (t, rounded up, never above the policy\'s `w`), e.g. `"minute";r=59;t=60`. On a 429 it names the violated policy, with `r=0` and `t` = `Retry-After`: `"month";r=0;t=259200`; during a ban (`KEY_BANNED`) `r=0` without `t` (`Retry-After` says when). For credits, r is the balance in credits; spent with no refill: `"credits";r=0` without `t` (402).',
    required: true,
    schema: { type: 'string' },
  },
  'Cache-Control': {
    description: `\`${API_CACHE_CONTROL}\` on every /v1 answer: it is for its caller alone (it carries the caller's rate-limit state) and no cache may store it.`,
    required: true,
    schema: { type: 'string' },
  },
  'X-Request-Id': {
    description: "The request id (the client's X-Request-Id when sent, else generated).",
    required: true,
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
  'WWW-Authenticate': {
    description: 'RFC 6750 challenge: `Bearer realm="petstore"`.',
    required: true,
    schema: { type: 'string' },
  },
  Deprecation: {
    description: 'RFC 9745: when the operation was deprecated, as `@<unix seconds>`.',
    required: true,
    schema: { type: 'string' },
  },
  Sunset: {
    description: 'RFC 8594: when the operation is removed (HTTP date).',
    required: true,
    schema: { type: 'string' },
  },
  Link: {
    description: 'The replacement: `</v1/pets>; rel="successor-version"`.',
    required: true,
    schema: { type: 'string' },
  },
};

const ref = (name: string): ReferenceObject => ({ $ref: `#/components/headers/${name}` });
const refs = (...names: string[]): HeadersObject => Object.fromEntries(names.map((name) => [name, ref(name)]));

const RATE_LIMIT = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];

/** Headers of every /v1 answer that went through authentication and rate limiting. */
export const COMMON_RESPONSE_HEADERS: HeadersObject = refs(...RATE_LIMIT, 'X-Request-Id', 'Cache-Control');
export const DEPRECATION_HEADERS: HeadersObject = refs('Deprecation', 'Sunset', 'Link');
/**
 * Error answers list the three X-RateLimit-* headers (what a client backs off on) and their own; they carry the
 * RateLimit fields and X-Request-Id too, as the success answers document, but six rows in each of a dozen tables
 * would bury the operation.
 */
const ERROR_HEADERS: HeadersObject = refs('X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset');

interface ErrorResponseSpec {
  /** Name under components.responses. */
  name: string;
  description: string;
  /** The codes this status is sent with, each with a real message. */
  examples: Array<[ErrorCode, string]>;
  headers: HeadersObject;
}

const example = (code: ErrorCode, message: string): ErrorBody => ({ code, message, status: ERROR_CODES[code] });

/**
 * Every error status the gateway can answer, with the codes and messages it really sends. 408 and 431 come from
 * the HTTP parser, before the request is authenticated or counted: they carry no rate-limit headers.
 */
const ERROR_RESPONSES: Record<number, ErrorResponseSpec> = {
  400: {
    name: 'BadRequest',
    description:
      'Invalid request: a field, query parameter or path value breaks a rule (`VALIDATION_FAILED`), the body is not valid JSON or not UTF-8 (`MALFORMED_JSON`), or the request cannot be read (`MALFORMED_REQUEST`: a body that does not match its Content-Encoding; broken HTTP framing, answered by the HTTP parser without rate-limit headers, after which the connection closes).',
    // listPets's: its query parameters (createPet and getPet have their own, OPERATION_ERROR_RESPONSES).
    examples: [
      ['VALIDATION_FAILED', 'limit must be an integer from 1 to 100'],
      ['VALIDATION_FAILED', 'status must be one of: available, pending, sold'],
      ['VALIDATION_FAILED', 'after must be the cursor of a Link rel="next" (1 to 128 base64url characters)'],
      ['VALIDATION_FAILED', 'unknown query parameter `colour`: allowed query parameters are limit, status, after'],
      ['MALFORMED_REQUEST', 'The request is not well-formed HTTP/1.1 (Invalid character in chunk size).'],
    ],
    headers: ERROR_HEADERS,
  },
  401: {
    name: 'Unauthorized',
    description:
      "A missing, unknown, expired or revoked API key, or an access token not valid here (`UNAUTHORIZED`); a valid one of a disabled account (`CONSUMER_DISABLED`: ask the API operators). Counted against the caller address's anonymous limit. Authentication comes before routing: any request under /v1 without a valid credential gets this 401.",
    examples: [
      ['UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <API key>.'],
      ['UNAUTHORIZED', 'Invalid or revoked API key.'],
      ['CONSUMER_DISABLED', 'The account this API key belongs to is disabled: contact the API operators.'],
      ['UNAUTHORIZED', 'Invalid or expired access token.'],
    ],
    headers: { ...ERROR_HEADERS, ...refs('WWW-Authenticate') },
  },
  403: {
    name: 'Forbidden',
    description:
      'An OAuth access token whose scopes do not allow this operation (`INSUFFICIENT_SCOPE`, RFC 6750): `WWW-Authenticate` names the scopes that would (`error="insufficient_scope", scope="..."`); counted on the token\'s consumer like a request no route takes, never sent for an API key. Or a valid key or token used from an address its consumer (or the key or client binding itself) is not allowed to be used from (`ADDRESS_NOT_ALLOWED`): counted against the caller address\'s anonymous limit like a 401, never on the consumer.',
    examples: [
      ['INSUFFICIENT_SCOPE', "The access token's scopes do not allow this operation: it needs one of: pets:write."],
      ['ADDRESS_NOT_ALLOWED', addressNotAllowedMessage('203.0.113.9')],
    ],
    headers: { ...ERROR_HEADERS, ...refs('WWW-Authenticate') },
  },
  404: {
    name: 'NotFound',
    description:
      'No animal with this id, or no route for the path (`NOT_FOUND`). Like a wrong method on an existing path (405 `METHOD_NOT_ALLOWED`, with `Allow`), an unknown path under /v1 is authenticated and counted first, and carries the rate-limit headers.',
    examples: [
      ['NOT_FOUND', 'No pet with id 42.'],
      ['NOT_FOUND', 'No route for GET /v1/pets/42/photos.'],
    ],
    headers: ERROR_HEADERS,
  },
  408: {
    name: 'RequestTimeout',
    description:
      'The request (headers, then body) was not received in time (`REQUEST_TIMEOUT`); the connection closes. Answered by the HTTP server: no rate-limit headers.',
    examples: [['REQUEST_TIMEOUT', 'The request was not received in time.']],
    headers: {},
  },
  410: {
    name: 'Gone',
    description: 'The operation was removed after its sunset date (`GONE`).',
    examples: [['GONE', 'This operation was removed on 2030-12-05: use GET /pets with a status filter.']],
    headers: { ...ERROR_HEADERS, ...DEPRECATION_HEADERS },
  },
  413: {
    name: 'PayloadTooLarge',
    description: `The request body is larger than ${BODY_LIMIT_BYTES / 1024} KiB (\`PAYLOAD_TOO_LARGE\`), answered as soon as Content-Length says so, or as soon as a body sent without one passes the limit; the connection closes.`,
    examples: [['PAYLOAD_TOO_LARGE', `The request body exceeds the limit of ${BODY_LIMIT_BYTES} bytes.`]],
    headers: ERROR_HEADERS,
  },
  415: {
    name: 'UnsupportedMediaType',
    description:
      'The request body is not `application/json` in UTF-8, or its Content-Encoding is not gzip, deflate, br or identity (`UNSUPPORTED_MEDIA_TYPE`).',
    examples: [['UNSUPPORTED_MEDIA_TYPE', 'Content-Type "text/plain" is not supported: send application/json.']],
    headers: ERROR_HEADERS,
  },
  402: {
    name: 'CreditsExhausted',
    description:
      'Prepaid credits: the balance does not cover this operation\'s cost and no scheduled refill ever will (none, or one below the cost) (`CREDITS_EXHAUSTED`). Nothing was consumed in any policy. No `Retry-After`: only a top-up helps. `RateLimit: "credits";r=0` (no `t`).',
    examples: [
      [
        'CREDITS_EXHAUSTED',
        "The credit balance (3) does not cover this request's cost (5) and no scheduled refill covers it: a top-up is needed.",
      ],
    ],
    headers: { ...ERROR_HEADERS, ...refs('RateLimit') },
  },
  429: {
    name: 'TooManyRequests',
    description:
      "Over a rate limit (`RATE_LIMITED`): the `RateLimit` field names the violated policy (`minute`, `day`, `month`, `credits` or a route's own) with `r=0`; for `credits` (a balance short of the operation's cost, with a refill scheduled) `Retry-After` is the next refill. Or the key is banned for sending on after 429s (`KEY_BANNED`). Wait for `Retry-After` (that policy's reset) and back off exponentially. Nothing is consumed by a refused request.",
    examples: [
      ['RATE_LIMITED', 'Rate limit of the minute window exceeded: retry after 42 seconds.'],
      ['RATE_LIMITED', 'Rate limit of the month window exceeded: retry after 259200 seconds.'],
      [
        'RATE_LIMITED',
        "The credit balance does not cover this request's cost: retry after the refill in 3600 seconds.",
      ],
      ['KEY_BANNED', 'Temporarily banned for sending on after rate-limit refusals: retry after 598 seconds.'],
    ],
    headers: { ...ERROR_HEADERS, ...refs('RateLimit', 'Retry-After') },
  },
  431: {
    name: 'HeadersTooLarge',
    description:
      'The request line and headers exceed 16 KiB (`HEADERS_TOO_LARGE`); the connection closes. Answered by the HTTP server: no rate-limit headers.',
    examples: [
      ['HEADERS_TOO_LARGE', 'The request line and headers exceed 16 KiB: shorten the query string or the headers.'],
    ],
    headers: {},
  },
  500: {
    name: 'InternalError',
    description:
      'An unexpected failure (`INTERNAL_ERROR`); details go to the log with the request id, never to the client.',
    examples: [['INTERNAL_ERROR', 'An unexpected error occurred.']],
    headers: ERROR_HEADERS,
  },
  502: {
    name: 'BadGateway',
    description: 'The pets service failed to answer (`BAD_GATEWAY`).',
    examples: [['BAD_GATEWAY', 'The pets service failed to answer.']],
    headers: ERROR_HEADERS,
  },
  503: {
    name: 'ServiceUnavailable',
    description:
      'The pets service or its database is unavailable (`SERVICE_UNAVAILABLE`). With `Retry-After`, nothing was changed and the request is safe to repeat; a createPet answered without `Retry-After` lost its database connection while committing: the animal may or may not have been added, so list before sending it again.',
    examples: [
      ['SERVICE_UNAVAILABLE', 'The pets service is unavailable.'],
      [
        'SERVICE_UNAVAILABLE',
        'The database is unavailable; nothing was changed. Retry after the time given in Retry-After.',
      ],
      [
        'SERVICE_UNAVAILABLE',
        'The database connection was lost while the change was being committed: it may or may not have been saved. Check (GET /pets) before sending it again.',
      ],
    ],
    headers: { ...ERROR_HEADERS, ...refs('Retry-After') },
  },
  504: {
    name: 'GatewayTimeout',
    description: 'The pets service did not answer in time (`GATEWAY_TIMEOUT`).',
    examples: [['GATEWAY_TIMEOUT', 'The pets service did not answer in time.']],
    headers: ERROR_HEADERS,
  },
};

/**
 * Where an operation's answers of a status have examples of their own: each example is a message that operation
 * can really give (createPet's 400 is about its body, getPet's about its path), never another's query rule.
 */
const OPERATION_ERROR_RESPONSES: Record<string, Record<number, ErrorResponseSpec>> = {
  createPet: {
    400: {
      ...ERROR_RESPONSES[400],
      name: 'BadRequestBody',
      description:
        'Invalid animal: a field breaks a rule or is unknown (`VALIDATION_FAILED`), the body is not valid JSON or not UTF-8 (`MALFORMED_JSON`), or the request cannot be read (`MALFORMED_REQUEST`: a body that does not match its Content-Encoding; broken HTTP framing, answered by the HTTP parser without rate-limit headers, after which the connection closes).',
      examples: [
        ['VALIDATION_FAILED', 'categoryId is required'],
        ['VALIDATION_FAILED', 'name must be 1 to 100 characters long'],
        ['VALIDATION_FAILED', 'unknown field `color`: allowed fields are name, categoryId, status'],
        ['MALFORMED_JSON', 'The request body is not valid JSON.'],
        ['MALFORMED_REQUEST', 'The request body does not match its Content-Encoding.'],
      ],
    },
  },
  getPet: {
    400: {
      ...ERROR_RESPONSES[400],
      name: 'BadRequestPetId',
      description:
        '`petId` is not an integer from 1 to 2^53-1 (`VALIDATION_FAILED`), or the request cannot be read (`MALFORMED_REQUEST`: broken HTTP framing, answered by the HTTP parser without rate-limit headers, after which the connection closes).',
      examples: [
        ['VALIDATION_FAILED', 'petId must be an integer from 1 to 9007199254740991'],
        ['MALFORMED_REQUEST', 'The request is not well-formed HTTP/1.1 (Invalid character in chunk size).'],
      ],
    },
  },
};

/** Statuses any operation can be answered with, whatever it does. */
export const EVERY_OPERATION_STATUSES = [400, 401, 402, 403, 408, 429, 431, 500, 502, 503, 504] as const;

/** components.responses: one per error status, with an example per code. */
export function errorResponseComponents(): Record<string, ResponseObject> {
  const specs = [
    ...Object.values(ERROR_RESPONSES),
    ...Object.values(OPERATION_ERROR_RESPONSES).flatMap((byStatus) => Object.values(byStatus)),
  ];
  return Object.fromEntries(
    specs.map((spec) => {
      const examples = Object.fromEntries(
        spec.examples.map(([code, message], i) => [
          spec.examples.filter(([c]) => c === code).length > 1 ? `${code}_${i + 1}` : code,
          { summary: message, value: example(code, message) },
        ]),
      );
      // One example is shown as it is; several get Swagger UI's example selector.
      const media =
        spec.examples.length === 1
          ? { schema: { $ref: '#/components/schemas/Error' }, example: example(...spec.examples[0]) }
          : { schema: { $ref: '#/components/schemas/Error' }, examples };
      return [
        spec.name,
        { description: spec.description, headers: spec.headers, content: { 'application/json': media } },
      ];
    }),
  );
}

/** The reference an operation's response of `status` is replaced with (see buildOpenApiDocument). */
export function errorResponseRef(status: number, operationId?: string): ReferenceObject | undefined {
  const spec =
    (operationId === undefined ? undefined : OPERATION_ERROR_RESPONSES[operationId]?.[status]) ??
    ERROR_RESPONSES[status];
  return spec ? { $ref: `#/components/responses/${spec.name}` } : undefined;
}

/**
 * Declares the error statuses of an operation (those of every operation are added): the document points each
 * one at its shared component in components.responses.
 */
export function ApiErrorResponses(...statuses: number[]): MethodDecorator {
  const all = [...new Set([...EVERY_OPERATION_STATUSES, ...statuses])].sort((a, b) => a - b);
  return applyDecorators(
    ...all.map((status) => ApiResponse({ status, description: ERROR_RESPONSES[status].description })),
  );
}
