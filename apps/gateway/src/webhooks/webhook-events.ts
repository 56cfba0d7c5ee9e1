import { MIN_WEBHOOK_SECRET_BYTES, WEBHOOK_SECRET_PREFIX } from '@app/outbound';

/** The event types an endpoint may filter on: the threshold events (docs/alerts.md). */
export const WEBHOOK_EVENT_TYPES = ['quota.threshold_crossed', 'credits.low_balance', 'credits.exhausted'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent by `POST …/webhook-endpoints/{id}/test` to that endpoint only, whatever its filter. */
export const TEST_EVENT_TYPE = 'webhook.test';
/** The consumer a fleet-wide endpoint's test names (no consumer's name can be it): the fleet, as in the usage history. */
export const FLEET_TEST_CONSUMER = '*';
/** Mailed to the consumer's contact email when one of its endpoints was disabled (never sent to an endpoint). */
export const ENDPOINT_DISABLED_TYPE = 'webhook.endpoint_disabled';

/** The outbox kinds the worker fans out to endpoints and the contact email (others, e.g. usage exports, are not its). */
export const FANNED_OUT_KINDS: readonly string[] = WEBHOOK_EVENT_TYPES;

/** The `webhook-id` of every attempt of an outbox message: Standard Webhooks' `msg_` and the message's id. */
export const webhookIdOf = (messageId: string): string => `msg_${messageId}`;

/** `whsec_…` and the last four characters: enough to tell two secrets apart, nothing to sign with. */
export function maskSecret(secret: string): string {
  return `${WEBHOOK_SECRET_PREFIX}…${secret.slice(-4)}`;
}

/** The random bytes of a new endpoint secret (the spec's least is 24). */
export const ENDPOINT_SECRET_BYTES = Math.max(32, MIN_WEBHOOK_SECRET_BYTES);

/** A mail's subject and text for an outbox message sent to the consumer's contact email. */
export function mailOf(kind: string, payload: Record<string, unknown>): { subject: string; text: string } {
  const consumer = String(payload.consumer ?? '');
  if (kind === ENDPOINT_DISABLED_TYPE) {
    const endpoint = payload.endpoint as { id: string; url: string };
    return {
      subject: `Webhook endpoint disabled: ${endpoint.url}`,
      text:
        `Deliveries to your webhook endpoint ${endpoint.url} (${endpoint.id}) of consumer ${consumer} have failed ` +
        `since ${String(payload.failingSince)}, so it was disabled at ${String(payload.disabledAt)}. Fix the ` +
        `receiver, then enable the endpoint again: later events will be delivered to it.\n`,
    };
  }
  if (kind === 'quota.threshold_crossed')
    return {
      subject: `${consumer}: ${String(payload.threshold)} % of the ${String(payload.policy)} limit reached`,
      text:
        `Consumer ${consumer} has used ${String(payload.used)} of its ${String(payload.policy)} limit of ` +
        `${String(payload.limit)} (the ${String(payload.threshold)} % threshold), in the period from ` +
        `${String(payload.periodStart)} to ${String(payload.periodEnd)}.\n`,
    };
  if (kind === 'credits.low_balance' || kind === 'credits.exhausted')
    return {
      subject: `${consumer}: credit balance ${kind === 'credits.exhausted' ? 'exhausted' : 'low'}`,
      text: `Consumer ${consumer}'s credit balance is ${String(payload.balance)} (the threshold is ${String(payload.threshold)}).\n`,
    };
  return { subject: `${consumer}: ${kind}`, text: `${JSON.stringify(payload, null, 2)}\n` };
}
