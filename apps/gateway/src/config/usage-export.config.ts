import { readFileSync } from 'node:fs';
import { OutboundAllowList } from '@app/outbound';
import { ConfigurationError } from '@app/platform';

/** The wire form usage aggregates are exported in; `off` (the default) exports nothing. */
export type UsageExportFormat = 'off' | 'cloudevents' | 'lago' | 'stripe';

export const USAGE_EXPORT_FORMATS: readonly UsageExportFormat[] = ['off', 'cloudevents', 'lago', 'stripe'];

/** The CloudEvents `type` when USAGE_EVENTS_NAME is unset. */
export const DEFAULT_CLOUDEVENTS_TYPE = 'petstore.api.usage';

/**
 * Consumer name to the billing system's customer (Lago's external_subscription_id, Stripe's customer id): the
 * file's entry first, else the template with `{consumer}` replaced, else none (the aggregate is not exported
 * and is reported as unmapped).
 */
export interface CustomerMapping {
  byConsumer: ReadonlyMap<string, string>;
  template?: string;
}

export function customerOf(mapping: CustomerMapping, consumer: string): string | undefined {
  return mapping.byConsumer.get(consumer) ?? mapping.template?.replaceAll('{consumer}', consumer);
}

/** The usage export to a billing system (docs/usage-export.md), as USAGE_EVENTS_* configure it. */
export interface UsageExportConfig {
  format: UsageExportFormat;
  /** Where the delivery worker sends the batches (not built yet: the outbox). */
  ingestUrl?: string;
  /** CloudEvents `source`: this gateway fleet, a URI-reference. */
  source?: string;
  /** CloudEvents `type`, Lago's billable metric code, or Stripe's meter event name. */
  name: string;
  customers: CustomerMapping;
  /** Which value Stripe's meter receives. */
  stripeValue: 'count' | 'credits';
  /** The outcomes sent to Stripe (its meter sums every event it gets, with no filter on the payload). */
  stripeOutcomes: readonly string[];
  /** How long after a bucket's end it may be exported (every instance's last flush of it written). */
  settleMs: number;
  /** Sent as `Authorization: Bearer <token>` with every request to the ingest URL (the ingest API's key). */
  token?: string;
  /** The operator's allow-list for the ingest URL (libs/outbound: an in-cluster OpenMeter on a private address). */
  allowList: OutboundAllowList;
  /** How often the exporter fills its outbox and sends what is due. */
  intervalMs: number;
  /** The longest wait between two attempts of a batch (the backoff doubles from intervalMs up to it). */
  retryMaxMs: number;
}

/** What the environment gives (GatewayEnvironment's USAGE_EVENTS_* fields, already type-checked). */
export interface UsageExportEnvironment {
  USAGE_EVENTS_FORMAT: UsageExportFormat;
  USAGE_EVENTS_URL?: string;
  USAGE_EVENTS_SOURCE?: string;
  USAGE_EVENTS_NAME?: string;
  USAGE_EVENTS_CUSTOMERS_FILE?: string;
  USAGE_EVENTS_CUSTOMER_TEMPLATE?: string;
  USAGE_EVENTS_STRIPE_VALUE: 'count' | 'credits';
  USAGE_EVENTS_STRIPE_OUTCOMES: string;
  USAGE_EVENTS_SETTLE_MS: number;
  USAGE_EVENTS_TOKEN?: string;
  USAGE_EVENTS_ALLOW_LIST: string;
  USAGE_EVENTS_INTERVAL_MS: number;
  USAGE_EVENTS_RETRY_MAX_MS: number;
  USAGE_FLUSH_MS: number;
}

/** The outcomes an aggregate may have (usage-export/usage-aggregate.ts: UsageOutcome; config stands below it). */
export const STRIPE_OUTCOME_NAMES: readonly string[] = ['ok', 'client_error', 'rate_limited', 'server_error'];

/** A flush of the bucket's last answers may start up to USAGE_FLUSH_MS after its end and run this long (its query timeout). */
const FLUSH_WRITE_MS = 5_000;

function invalid(message: string): never {
  throw new ConfigurationError(`Invalid configuration: ${message}`);
}

function customersFile(path: string): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    invalid(`USAGE_EVENTS_CUSTOMERS_FILE ${path} cannot be read as JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    invalid('USAGE_EVENTS_CUSTOMERS_FILE must hold a JSON object of consumer names to customer ids');
  const entries = Object.entries(parsed as Record<string, unknown>);
  const wrong = entries.find(([, id]) => typeof id !== 'string' || id.length === 0);
  if (wrong) invalid(`USAGE_EVENTS_CUSTOMERS_FILE: the customer of ${wrong[0]} must be a non-empty string`);
  return new Map(entries as Array<[string, string]>);
}

/**
 * Parses and checks the USAGE_EVENTS_* variables once, at start-up: with a format on, its URL, its source (for
 * CloudEvents) and its name (for Lago and Stripe) must be set, and the settle time must cover a flush.
 */
export function usageExportConfigOf(e: UsageExportEnvironment): UsageExportConfig {
  const format = e.USAGE_EVENTS_FORMAT;
  // Checked only with a format on: a deployment without the export keeps any USAGE_FLUSH_MS it had.
  if (format !== 'off') {
    if (e.USAGE_EVENTS_SETTLE_MS < e.USAGE_FLUSH_MS + FLUSH_WRITE_MS)
      invalid(
        `USAGE_EVENTS_SETTLE_MS (${e.USAGE_EVENTS_SETTLE_MS}) must be at least USAGE_FLUSH_MS + ${FLUSH_WRITE_MS} (${e.USAGE_FLUSH_MS + FLUSH_WRITE_MS}): a bucket is exported only once every instance has written it`,
      );
    if (!e.USAGE_EVENTS_URL) invalid(`USAGE_EVENTS_URL must be set when USAGE_EVENTS_FORMAT is ${format}`);
    if (format === 'cloudevents' && !e.USAGE_EVENTS_SOURCE)
      invalid('USAGE_EVENTS_SOURCE must be set when USAGE_EVENTS_FORMAT is cloudevents (the source URI of this fleet)');
    if (format !== 'cloudevents' && !e.USAGE_EVENTS_NAME)
      invalid(
        `USAGE_EVENTS_NAME must be set when USAGE_EVENTS_FORMAT is ${format} (${format === 'lago' ? "the billable metric's code" : "the meter's event name"})`,
      );
  }
  const template = e.USAGE_EVENTS_CUSTOMER_TEMPLATE;
  if (template !== undefined && !template.includes('{consumer}'))
    invalid('USAGE_EVENTS_CUSTOMER_TEMPLATE must contain {consumer}');
  const stripeOutcomes = e.USAGE_EVENTS_STRIPE_OUTCOMES.split(',').map((outcome) => outcome.trim());
  const unknown = stripeOutcomes.filter((outcome) => !STRIPE_OUTCOME_NAMES.includes(outcome));
  if (unknown.length > 0 || stripeOutcomes.length === 0)
    invalid(
      `USAGE_EVENTS_STRIPE_OUTCOMES must be a comma-separated list of ${STRIPE_OUTCOME_NAMES.join(', ')} (got ${JSON.stringify(e.USAGE_EVENTS_STRIPE_OUTCOMES)})`,
    );
  let allowList: OutboundAllowList;
  try {
    allowList = OutboundAllowList.parse(e.USAGE_EVENTS_ALLOW_LIST);
  } catch (error) {
    invalid(`USAGE_EVENTS_ALLOW_LIST: ${(error as Error).message}`);
  }
  return {
    format,
    ingestUrl: e.USAGE_EVENTS_URL,
    source: e.USAGE_EVENTS_SOURCE,
    name: e.USAGE_EVENTS_NAME ?? DEFAULT_CLOUDEVENTS_TYPE,
    customers: {
      byConsumer: e.USAGE_EVENTS_CUSTOMERS_FILE ? customersFile(e.USAGE_EVENTS_CUSTOMERS_FILE) : new Map(),
      template,
    },
    stripeValue: e.USAGE_EVENTS_STRIPE_VALUE,
    stripeOutcomes,
    settleMs: e.USAGE_EVENTS_SETTLE_MS,
    token: e.USAGE_EVENTS_TOKEN,
    allowList,
    intervalMs: e.USAGE_EVENTS_INTERVAL_MS,
    retryMaxMs: Math.max(e.USAGE_EVENTS_RETRY_MAX_MS, e.USAGE_EVENTS_INTERVAL_MS),
  };
}
