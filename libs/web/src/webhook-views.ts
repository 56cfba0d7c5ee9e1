import type {
  AdminFailingWebhookEndpoint,
  AdminWebhookDelivery,
  AdminWebhookEndpoint,
  AdminWebhookEndpointInput,
  AdminWebhookEventType,
  AdminWebhookTargetRefusalReason,
} from './admin-api-types';
import { DEFAULT_ROTATION_OVERLAP, ROTATION_OVERLAPS } from '@app/contract';
import { AdminApiError } from './admin-api-error';
import { formTextError } from './form-text';
import { refusalText } from './refusals';
import type { RefusalSentences } from './refusals';

/**
 * Each event type of the admin API's document, in words. `satisfies Record<…>`: a type the document adds (or drops)
 * fails `npm run typecheck` until it is named here, so the form offers exactly the document's types.
 */
const EVENT_TYPE_LABELS = {
  'quota.threshold_crossed': 'A quota threshold crossed (day, month)',
  'credits.low_balance': 'Credits running low',
  'credits.exhausted': 'Credits exhausted',
} as const satisfies Record<AdminWebhookEventType, string>;

export const WEBHOOK_EVENT_TYPES = Object.keys(EVENT_TYPE_LABELS) as AdminWebhookEventType[];

/**
 * The admin API's bounds on an endpoint's fields (its document's `maxLength` of CreateWebhookEndpointDto; a test,
 * webhook-views.spec.ts, holds these to it): the form says so next to the field before anything is sent.
 */
export const WEBHOOK_URL_MAX = 2048;
export const WEBHOOK_DESCRIPTION_MAX = 200;

/** What a webhook form says next to a field. */
export const WEBHOOK_FORM_ERRORS = {
  url: 'Type the full address of your receiver, starting with https:// (or http://).',
  urlLength: `Use an address of at most ${WEBHOOK_URL_MAX} characters.`,
  description: `Use at most ${WEBHOOK_DESCRIPTION_MAX} characters.`,
  eventTypes: 'Choose among the event types listed.',
  /** A target the gateway's outbound policy refuses, for a reason this page does not know (docs/webhooks.md). */
  target:
    'Webhooks are never sent to this address: it must be a public host that resolves, not a loopback, private, ' +
    'link-local, shared (CGNAT), cloud metadata or other internal address, and use https:// in production.',
} as const;

/**
 * Why the gateway refuses a target (`WEBHOOK_TARGET_REFUSED`'s `details.reason`), in words. `satisfies Record<…>`:
 * a reason the admin document adds fails `npm run typecheck` until it is named here.
 */
const TARGET_REFUSAL_WORDS = {
  loopback: 'it is a loopback address (the gateway’s own machine)',
  private: 'it is a private network address',
  link_local: 'it is a link-local address',
  metadata: 'it is a cloud metadata address',
  cgnat: 'it is a shared (CGNAT) address',
  unspecified: 'it is an unspecified address (0.0.0.0 or ::)',
  multicast: 'it is a multicast address',
  broadcast: 'it is the broadcast address',
  reserved: 'it is a reserved or documentation address',
  embedded_ipv4: 'it is an IPv6 address that carries a refused IPv4 address',
  transition: 'it is an IPv6 transition address (6to4, Teredo, NAT64)',
  not_an_address: 'its host is not an address that can be reached',
  https_required: 'plain http:// is refused here: use https://',
  invalid_url: 'it carries a user name or password, or no host: remove them',
  unresolvable: 'its host name does not resolve',
} as const satisfies Record<AdminWebhookTargetRefusalReason, string>;

/** The sentence next to the URL field for a target the gateway refused, naming its reason when the page knows it. */
export function targetRefusalText(reason: string | undefined): string {
  const words =
    reason !== undefined && Object.hasOwn(TARGET_REFUSAL_WORDS, reason)
      ? TARGET_REFUSAL_WORDS[reason as AdminWebhookTargetRefusalReason]
      : undefined;
  return words ? `Webhooks are never sent to this address: ${words}.` : WEBHOOK_FORM_ERRORS.target;
}

export type WebhookField = 'url' | 'description' | 'eventTypes';

/** An endpoint form as typed (shown again beside a refusal) and the sentence next to each refused field. */
export interface WebhookFormState {
  typed: { url: string; description: string; eventTypes: string[] };
  errors: Partial<Record<WebhookField, string>>;
  /** A refusal about the whole form (the endpoint cap, a scope), above it. */
  failed?: string;
}

/** The event-type checkboxes of the form, each checked as typed. */
export interface EventTypeChoice {
  value: AdminWebhookEventType;
  label: string;
  checked: boolean;
}

export function eventTypeChoices(checked: readonly string[] = []): EventTypeChoice[] {
  return WEBHOOK_EVENT_TYPES.map((value) => ({
    value,
    label: EVENT_TYPE_LABELS[value],
    checked: checked.includes(value),
  }));
}

const isEventType = (value: string): value is AdminWebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);

function listOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return typeof value === 'string' ? [value] : [];
}

/**
 * An add-endpoint form: the admin API's body, or the form shown again with what the page can say better than the
 * API (an address that is not one, a length, plain text, a type not offered). No type checked: every type (null).
 * Whether the address may be reached is the gateway's rule alone (its outbound policy and allow-list): its refusal
 * comes back as `webhookRefusal`.
 */
export function readWebhookForm(body: unknown): { input: AdminWebhookEndpointInput } | { refused: WebhookFormState } {
  const form = (body ?? {}) as Record<string, unknown>;
  const typed = {
    url: typeof form.url === 'string' ? form.url.trim() : '',
    description: typeof form.description === 'string' ? form.description.trim() : '',
    eventTypes: listOf(form.eventTypes),
  };
  const errors: WebhookFormState['errors'] = {
    url: urlError(typed.url),
    description:
      typed.description.length > WEBHOOK_DESCRIPTION_MAX
        ? WEBHOOK_FORM_ERRORS.description
        : formTextError(typed.description),
    eventTypes: typed.eventTypes.every(isEventType) ? undefined : WEBHOOK_FORM_ERRORS.eventTypes,
  };
  if (errors.url || errors.description || errors.eventTypes) return { refused: { typed, errors } };
  const eventTypes = typed.eventTypes.filter(isEventType);
  return {
    input: {
      url: typed.url,
      ...(typed.description ? { description: typed.description } : {}),
      eventTypes: eventTypes.length ? [...new Set(eventTypes)] : null,
    },
  };
}

function urlError(url: string): string | undefined {
  if (url.length > WEBHOOK_URL_MAX) return WEBHOOK_FORM_ERRORS.urlLength;
  if (!/^https?:\/\/\S+$/i.test(url) || !URL.canParse(url)) return WEBHOOK_FORM_ERRORS.url;
  return undefined;
}

/** The endpoint pages' own sentences for the admin API's refusals (by code; the rest: REFUSALS). */
export const WEBHOOK_REFUSALS: RefusalSentences = {
  NOT_FOUND: 'No such webhook endpoint.',
  WEBHOOK_ENDPOINT_LIMIT: 'You have the most webhook endpoints allowed: remove one before adding another.',
};

/**
 * An add-endpoint form the admin API refused, shown again. A target its outbound policy refuses
 * (`WEBHOOK_TARGET_REFUSED`) goes next to the URL, naming the reason from the body's details (the code and details
 * decide, never the message); every other refusal goes above the form.
 */
export function webhookRefusal(
  error: AdminApiError,
  typed: WebhookFormState['typed'],
  own: RefusalSentences = {},
): WebhookFormState {
  if (error.code === 'WEBHOOK_TARGET_REFUSED')
    return { typed, errors: { url: targetRefusalText(error.details.reason) } };
  return { typed, errors: {}, failed: refusalText(error, { ...WEBHOOK_REFUSALS, ...own }) };
}

/** One row of the `webhook-endpoints` partial. */
export interface WebhookEndpointRow {
  id: string;
  consumer: string | null;
  /** The endpoint's URL (not `url`: the templates' helper of that name would shadow it). */
  target: string;
  description: string;
  /** The types in words; "Every event type" without a filter. */
  eventTypes: string[];
  enabled: boolean;
  disabledAt: string | null;
  disabledReason: string | null;
  failingSince: string | null;
  createdAt: string;
  /** The masked secret (`whsec_…abcd`): tells two secrets apart. */
  secret: string;
  /** The app's page of this endpoint's deliveries, and the base of its actions' paths. */
  path: string;
}

export function webhookEndpointRow(endpoint: AdminWebhookEndpoint, path: string): WebhookEndpointRow {
  return {
    id: endpoint.id,
    consumer: endpoint.consumer,
    target: endpoint.url,
    description: endpoint.description,
    eventTypes: endpoint.eventTypes ? endpoint.eventTypes.map((t) => EVENT_TYPE_LABELS[t]) : ['Every event type'],
    enabled: endpoint.enabled,
    disabledAt: endpoint.disabledAt,
    disabledReason: endpoint.disabledReason,
    failingSince: endpoint.failingSince,
    createdAt: endpoint.createdAt,
    secret: endpoint.secret,
    path,
  };
}

/** One delivery of the `webhook-deliveries` partial, its attempts oldest first. */
export interface WebhookDeliveryRow {
  id: string;
  webhookId: string;
  eventType: string;
  createdAt: string;
  state: AdminWebhookDelivery['state'];
  /** The state in words ("delivered", "pending: next attempt …", "failed: given up"). */
  stateBadge: 'ok' | 'warn' | 'bad';
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  attempts: Array<{ attempt: number; at: string; status: string; latency: string; error: string | null; ok: boolean }>;
  /** The Redeliver form's action (null: the page offers none). */
  redeliverAction: string | null;
}

const STATE_BADGES = { delivered: 'ok', pending: 'warn', failed: 'bad' } as const satisfies Record<
  AdminWebhookDelivery['state'],
  WebhookDeliveryRow['stateBadge']
>;

/** `redeliverPath(id)`: where a delivery's Redeliver form posts; null: no Redeliver (a read-only token). */
export function webhookDeliveryRows(
  deliveries: readonly AdminWebhookDelivery[],
  redeliverPath: ((id: string) => string) | null,
): WebhookDeliveryRow[] {
  return deliveries.map((d) => ({
    id: d.id,
    webhookId: d.webhookId,
    eventType: d.eventType,
    createdAt: d.createdAt,
    state: d.state,
    stateBadge: STATE_BADGES[d.state],
    nextAttemptAt: d.nextAttemptAt,
    deliveredAt: d.deliveredAt,
    attempts: d.attempts.map((a) => ({
      attempt: a.attempt,
      at: a.at,
      status: a.statusCode === null ? 'no answer' : String(a.statusCode),
      latency: `${a.latencyMs.toLocaleString('en-US')} ms`,
      error: a.error,
      ok: a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300,
    })),
    redeliverAction: redeliverPath ? redeliverPath(encodeURIComponent(d.id)) : null,
  }));
}

/** The failing list's newest attempt in words: its error, else its status; null before any attempt. */
export function lastAttemptError(endpoint: AdminFailingWebhookEndpoint): string | null {
  if (endpoint.lastAttemptAt === null) return null;
  return endpoint.lastError ?? (endpoint.lastStatus === null ? 'no answer' : `HTTP ${endpoint.lastStatus}`);
}

/**
 * How long a rotated webhook secret keeps signing beside the new one: the keys' overlaps (one list, the admin API's
 * bounds), worded for a secret. None is for a secret that leaked.
 */
export function secretOverlapChoices(): Array<{ value: string; label: string; selected: boolean }> {
  return ROTATION_OVERLAPS.map((overlap) => ({
    value: overlap.value,
    label: overlap.seconds === 0 ? 'None: the old secret stops signing now' : overlap.label,
    selected: overlap.value === DEFAULT_ROTATION_OVERLAP.value,
  }));
}
