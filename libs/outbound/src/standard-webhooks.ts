import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** The prefix of a Standard Webhooks secret: `whsec_<base64 of the key>`. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** The spec asks for 24 to 64 random bytes; 32 by default. */
export const MIN_WEBHOOK_SECRET_BYTES = 24;
const MAX_WEBHOOK_SECRET_BYTES = 64;

/** The three headers of a signed webhook (https://www.standardwebhooks.com/). */
export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** A new signing secret, `whsec_` and the base64 of `bytes` random bytes (24 to 64). Shown to its owner once. */
export function generateWebhookSecret(bytes = 32): string {
  if (!Number.isInteger(bytes) || bytes < MIN_WEBHOOK_SECRET_BYTES || bytes > MAX_WEBHOOK_SECRET_BYTES)
    throw new RangeError(`a webhook secret has ${MIN_WEBHOOK_SECRET_BYTES} to ${MAX_WEBHOOK_SECRET_BYTES} bytes`);
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(bytes).toString('base64')}`;
}

/**
 * A message id, `msg_<uuid>`: the same for every attempt of one message, so that its receiver can drop a repeat
 * (the spec's idempotency key).
 */
export function newWebhookMessageId(): string {
  return `msg_${randomUUID()}`;
}

function signerOf(secret: string): Webhook {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : '';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || Buffer.from(encoded, 'base64').length < MIN_WEBHOOK_SECRET_BYTES)
    throw new Error(
      `a webhook secret is ${WEBHOOK_SECRET_PREFIX} and the base64 of ${MIN_WEBHOOK_SECRET_BYTES}+ bytes`,
    );
  return new Webhook(secret);
}

/**
 * Signs a payload as Standard Webhooks specifies, with the `standardwebhooks` package (HMAC-SHA256 over
 * `<id>.<timestamp in seconds>.<payload>`, `v1,<base64>`). Several secrets (during a rotation's overlap) give one
 * signature each, separated by spaces: a receiver that knows either accepts the message. The payload is the exact
 * text sent as the body (UTF-8); the timestamp comes from the caller's clock.
 */
export function signWebhook(
  secrets: string | readonly string[],
  message: { id: string; timestamp: Date; payload: string },
): WebhookHeaders {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  if (list.length === 0) throw new Error('signWebhook needs at least one secret');
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(Math.floor(message.timestamp.getTime() / 1000)),
    'webhook-signature': list
      .map((secret) => signerOf(secret).sign(message.id, message.timestamp, message.payload))
      .join(' '),
  };
}
