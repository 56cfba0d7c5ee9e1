import { ErrorBody, ErrorCode, ERROR_CODES, ErrorDetails } from '@app/errors';
import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import type { ResponseObject } from '@nestjs/swagger';

export const MISSING_TOKEN_MESSAGE = 'Missing admin token: send Authorization: Bearer <token>.';
export const INVALID_TOKEN_MESSAGE = 'Invalid, expired or revoked admin token.';
export const DATABASE_UNAVAILABLE_MESSAGE = 'The consumers database is unreachable: retry shortly.';

/** An import batch (500 consumers with their keys) fits; nothing on this port takes more. */
export const ADMIN_BODY_LIMIT_BYTES = 1024 * 1024;

/** The consumer and key the examples speak of. */
export const EXAMPLE_CONSUMER = 'acme';
export const EXAMPLE_KEY_ID = '3f0c2a9e-5b7d-4c1e-9a8f-2d6b4e1c7a05';
export const EXAMPLE_SUCCESSOR_ID = '7b1e4d2c-9a3f-4e6b-8c5d-1f2a3b4c5d6e';

/** An error answer's code and message, and its details where the code has some. */
export type AdminExample = [ErrorCode, string, ErrorDetails?];

const body = (code: ErrorCode, message: string, details?: ErrorDetails): ErrorBody => ({
  code,
  message,
  status: ERROR_CODES[code],
  ...(details ? { details } : {}),
});
const ERROR_SCHEMA = { $ref: '#/components/schemas/Error' };

/** One media type with its examples: one is shown as it is, several get Swagger UI's example selector. */
function errorContent(examples: AdminExample[]): ResponseObject['content'] {
  if (examples.length === 1) return { 'application/json': { schema: ERROR_SCHEMA, example: body(...examples[0]) } };
  const named = Object.fromEntries(
    examples.map(([code, message, details], i) => [
      `${code}_${i + 1}`,
      { summary: message, value: body(code, message, details) },
    ]),
  );
  return { 'application/json': { schema: ERROR_SCHEMA, examples: named } };
}

/** What a malformed body gets on every operation that takes one. */
export const MALFORMED_BODY: AdminExample[] = [
  ['MALFORMED_JSON', 'The request body is not valid JSON.'],
  ['VALIDATION_FAILED', 'The request body must be a JSON object.'],
];

/**
 * Error answers every admin operation can give, whatever it does: shared components.responses, referenced
 * from each operation (413 and 415 from those that take a body). Each example is a message the API sends.
 */
const SHARED: Record<
  number,
  { name: string; description: string; examples: AdminExample[]; headers?: ResponseObject['headers'] }
> = {
  401: {
    name: 'Unauthorized',
    description:
      'Missing or wrong admin token (`UNAUTHORIZED`), with `WWW-Authenticate`: every route needs `Authorization: Bearer <ADMIN_TOKEN>`.',
    examples: [
      ['UNAUTHORIZED', MISSING_TOKEN_MESSAGE],
      ['UNAUTHORIZED', INVALID_TOKEN_MESSAGE],
    ],
    headers: {
      'WWW-Authenticate': {
        description:
          'RFC 6750 challenge: `Bearer realm="petstore-admin"` (with `error="invalid_token"` for a wrong token).',
        required: true,
        schema: { type: 'string' },
      },
    },
  },
  413: {
    name: 'PayloadTooLarge',
    description: `The request body is larger than ${ADMIN_BODY_LIMIT_BYTES / 1024 / 1024} MiB (\`PAYLOAD_TOO_LARGE\`); the connection closes.`,
    examples: [['PAYLOAD_TOO_LARGE', `The request body exceeds the limit of ${ADMIN_BODY_LIMIT_BYTES} bytes.`]],
  },
  415: {
    name: 'UnsupportedMediaType',
    description:
      'The request has a body that is not `application/json` in UTF-8, or its Content-Encoding is not gzip, deflate, br or identity (`UNSUPPORTED_MEDIA_TYPE`).',
    examples: [
      ['UNSUPPORTED_MEDIA_TYPE', 'Content-Type "text/plain" is not supported: send application/json.'],
      ['UNSUPPORTED_MEDIA_TYPE', 'A request body needs Content-Type: application/json.'],
    ],
  },
  500: {
    name: 'InternalError',
    description:
      "An unexpected failure (`INTERNAL_ERROR`); details go to the gateway's log with the request id, never to the client.",
    examples: [['INTERNAL_ERROR', 'An unexpected error occurred.']],
  },
  503: {
    name: 'ServiceUnavailable',
    description:
      'The consumers database cannot be reached (`SERVICE_UNAVAILABLE`): nothing was changed; retry after `Retry-After`.',
    examples: [['SERVICE_UNAVAILABLE', DATABASE_UNAVAILABLE_MESSAGE]],
    headers: {
      'Retry-After': {
        description: 'Seconds to wait before retrying.',
        required: true,
        schema: { type: 'integer', minimum: 1 },
      },
    },
  },
};

/** Statuses every operation is answered with; BODY_STATUSES too for those that take a body (POST, PATCH). */
export const EVERY_OPERATION_STATUSES = [401, 500, 503] as const;
export const BODY_STATUSES = [413, 415] as const;

export function sharedErrorResponses(): Record<string, ResponseObject> {
  return Object.fromEntries(
    Object.values(SHARED).map((spec) => [
      spec.name,
      {
        description: spec.description,
        ...(spec.headers ? { headers: spec.headers } : {}),
        content: errorContent(spec.examples),
      },
    ]),
  );
}

export function sharedErrorRef(status: number): { $ref: string } {
  return { $ref: `#/components/responses/${SHARED[status].name}` };
}

/** The examples of a shared status, for the tests that check them against real answers. */
export function sharedExamples(status: number): AdminExample[] {
  return SHARED[status].examples;
}

export const notFound = (...more: string[]): string[] => [`No consumer named "${EXAMPLE_CONSUMER}".`, ...more];
export const NO_SUCH_KEY = `Consumer "${EXAMPLE_CONSUMER}" has no key ${EXAMPLE_KEY_ID}.`;

/**
 * The errors of one admin operation that differ from operation to operation: its 400s (the rules it checks), its
 * 409s (the conflicts: a code of their own each) and, on a consumer's routes, its 404s naming the consumer (or
 * key). Each message is
 * one the operation really sends (test/e2e/admin-api/openapi-examples.e2e-spec.ts sends a request for each). A 503 of its own
 * (unban: Redis) replaces the shared one.
 */
export function AdminErrors(errors: {
  400: AdminExample[];
  /** The messages; with a description when the 404 is not about a consumer (a token: one a restricted token does not see). */
  404?: string[] | { description: string; messages: string[] };
  409?: AdminExample[];
  503?: { description: string; examples: AdminExample[] };
}): MethodDecorator {
  const decorators = [
    ApiResponse({
      status: 400,
      description:
        'Invalid request (`VALIDATION_FAILED`, `MALFORMED_JSON`): the message names the rule broken.' +
        (errors[400].some(([code]) => code === 'WEBHOOK_TARGET_REFUSED')
          ? ' A URL the outbound policy refuses is `WEBHOOK_TARGET_REFUSED`, its class in `details.reason`.'
          : ''),
      content: errorContent(errors[400]),
    }),
  ];
  const notFound = errors[404];
  if (notFound) {
    const messages = Array.isArray(notFound) ? notFound : notFound.messages;
    decorators.push(
      ApiResponse({
        status: 404,
        description: !Array.isArray(notFound)
          ? notFound.description
          : messages.length > 1
            ? 'No such consumer, or no such key of it (`NOT_FOUND`).'
            : 'No such consumer (`NOT_FOUND`).',
        content: errorContent(messages.map((m): AdminExample => ['NOT_FOUND', m])),
      }),
    );
  }
  if (errors[409]) {
    const codes = [...new Set(errors[409].map(([code]) => `\`${code}\``))].join(', ');
    decorators.push(
      ApiResponse({
        status: 409,
        description: `The state of what the request names refuses it (${codes}): nothing was changed.`,
        content: errorContent(errors[409]),
      }),
    );
  }
  if (errors[503]) {
    decorators.push(
      ApiResponse({
        status: 503,
        description: errors[503].description,
        headers: SHARED[503].headers,
        content: errorContent([...SHARED[503].examples, ...errors[503].examples]),
      }),
    );
  }
  return applyDecorators(...decorators);
}

/** A response of one status with its own description and examples (404 of a plan request). */
export function AdminErrorResponse(status: number, description: string, examples: AdminExample[]): MethodDecorator {
  return ApiResponse({ status, description, content: errorContent(examples) });
}
