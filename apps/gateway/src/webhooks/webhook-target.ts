import { ApiError } from '@app/errors';
import { OutboundFailure, REFUSAL_REASONS } from '@app/outbound';

/**
 * Why a webhook URL is refused when saved (docs/webhooks.md, "Where a request may go"): an address class the
 * outbound policy refuses, or `https_required` (plain http: in production), `invalid_url` (credentials in it, no
 * host), `unresolvable` (its host name does not resolve now). The Error body's `details.reason`: a page names it.
 */
export const TARGET_REFUSAL_REASONS = [...REFUSAL_REASONS, 'https_required', 'invalid_url', 'unresolvable'] as const;
export type TargetRefusalReason = (typeof TARGET_REFUSAL_REASONS)[number];

export const TARGET_REFUSED_PREFIX = 'url is not a target webhooks may be sent to';

function reasonOf(failure: OutboundFailure): TargetRefusalReason {
  switch (failure.kind) {
    case 'refused_target':
      return failure.reason ?? 'not_an_address';
    case 'https_required':
    case 'invalid_url':
      return failure.kind;
    default:
      // connect_error (and what no check gives: timeout, too_large): the name led nowhere now.
      return 'unresolvable';
  }
}

/** The 400 `WEBHOOK_TARGET_REFUSED` of a URL the outbound policy refused: the class in the message and details. */
export function targetRefused(failure: OutboundFailure): ApiError {
  const reason = reasonOf(failure);
  return new ApiError(
    'WEBHOOK_TARGET_REFUSED',
    `${TARGET_REFUSED_PREFIX} (${reason}): ${failure.message}`,
    {},
    {
      reason,
    },
  );
}
