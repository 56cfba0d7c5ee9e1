import type { ErrorCode } from '@app/errors';
import { AdminApiError } from './admin-api-error';

/** The codes an AdminApiError can carry: the Error contract's, and the client's own for a missing or slow API. */
export type AdminErrorCode = ErrorCode | 'ADMIN_UNREACHABLE' | 'ADMIN_TIMEOUT' | 'ADMIN_ERROR';

/** A page's own sentences for the refusals it expects, by code; the rest fall back to REFUSALS. */
export type RefusalSentences = Partial<Record<AdminErrorCode, string>>;

/**
 * What a page says when the admin API refuses, chosen by the error's `code` (never by its message, which is the
 * API's and never shown): every code the admin API answers with has a sentence of the web apps' own.
 */
export const REFUSALS: Record<AdminErrorCode, string> = {
  VALIDATION_FAILED: 'Some of what was sent is not valid: check the form and try again.',
  WEBHOOK_TARGET_REFUSED: 'Webhooks are never sent to this address: use a public https:// address of your receiver.',
  MALFORMED_JSON: 'The request could not be read: try again.',
  MALFORMED_REQUEST: 'The request could not be read: try again.',
  UNAUTHORIZED: 'Your sign-in is no longer accepted: sign in again.',
  CREDITS_EXHAUSTED: 'The credit balance is spent: a top-up is needed before more requests are answered.',
  CONSUMER_DISABLED: 'This consumer is disabled: an operator must enable it first.',
  FORBIDDEN: 'You are not allowed to do this.',
  INSUFFICIENT_SCOPE: 'You are not allowed to do this.',
  ADDRESS_NOT_ALLOWED: 'You are not allowed to do this from where you are.',
  NOT_FOUND: 'Not found: it does not exist, or no longer does.',
  CONSUMER_EXISTS: 'A consumer of that name exists already: choose another name.',
  KEY_ALREADY_ROTATED: 'This key was rotated already: rotate its successor instead.',
  KEY_REVOKED: 'This key is revoked: create a new key instead.',
  KEY_EXPIRED: 'This key has expired: create a new key instead.',
  KEY_LIMIT_REACHED: 'That would be more active keys than allowed: revoke one first.',
  KEY_OF_ANOTHER_CONSUMER: 'One of these keys belongs to another consumer: nothing was imported.',
  CLIENT_ALREADY_BOUND: 'This client is bound to a consumer already: unbind it there first.',
  PLAN_UNCHANGED: 'That is the plan you are on already: choose another plan.',
  PLAN_REQUEST_PENDING: 'A request is already waiting for an answer: you can ask again once it is decided.',
  PLAN_REQUEST_DECIDED: 'This request was decided already, by someone else or a moment ago: nothing changed.',
  PLAN_REQUEST_STALE: 'The consumer changed plan since this request was made: nothing changed. Decline it instead.',
  WEBHOOK_ENDPOINT_LIMIT: 'That would be more webhook endpoints than allowed: remove one first.',
  METHOD_NOT_ALLOWED: 'This cannot be done here.',
  REQUEST_TIMEOUT: 'The request took too long: try again.',
  GONE: 'This is no longer offered.',
  PAYLOAD_TOO_LARGE: 'That is too much text: shorten it and try again.',
  UNSUPPORTED_MEDIA_TYPE: 'The request could not be read: try again.',
  RATE_LIMITED: 'Too many requests: wait a moment and try again.',
  KEY_BANNED: 'Too many requests: wait a moment and try again.',
  HEADERS_TOO_LARGE: 'The request could not be read: try again.',
  INTERNAL_ERROR: 'Something went wrong on our side: try again in a moment.',
  BAD_GATEWAY: 'Something went wrong on our side: try again in a moment.',
  SERVICE_UNAVAILABLE: 'The service is unavailable right now: try again in a moment.',
  GATEWAY_TIMEOUT: 'The service did not answer in time: try again in a moment.',
  ADMIN_UNREACHABLE: 'The admin API cannot be reached right now: try again in a moment.',
  ADMIN_TIMEOUT: 'The service did not answer in time: try again in a moment.',
  ADMIN_ERROR: 'Something went wrong on our side: try again in a moment.',
};

/** The sentence a page shows for a refusal: its own for the code, else the shared one, else a generic one. */
export function refusalText(error: AdminApiError, own: RefusalSentences = {}): string {
  const code = error.code as AdminErrorCode;
  return own[code] ?? REFUSALS[code] ?? 'This could not be done: try again, or ask an operator.';
}

/**
 * A form shows the admin API's refusals (a 4xx but 401) next to its fields; anything else (a token that no longer
 * signs in, an admin API that is down or failed) goes on to the app's exception filter, which owns those pages.
 */
export function rethrowUnlessRefusal(caught: unknown): asserts caught is AdminApiError {
  if (!(caught instanceof AdminApiError) || caught.status === 401 || caught.status >= 500) throw caught;
}
