import type {
  AdminAuditEntry,
  AdminBilling,
  AdminClientBinding,
  CreditsPanel,
  AdminConsumer,
  AdminCurrentUsage,
  AdminPlanRequest,
  AdminToken,
  AdminUsageTop,
  KeyTable,
  PageModel,
  PlanStatement,
  PolicyCard,
  UsageTable,
  EventTypeChoice,
  WebhookDeliveryRow,
  WebhookEndpointRow,
  WebhookFormState,
} from '@app/web';
import { typedRender, typedRenderer } from '@app/web';
import type { Unavailable } from './sections';

/** A panel of a page: its data, or the sentence saying why it is not shown. */
type Panel<T> = T | Unavailable;

export interface OverviewView extends PageModel {
  hourly: Panel<UsageTable>;
  daily: Panel<UsageTable>;
  ranges: Array<{ value: string; label: string; selected: boolean }>;
  rangeLabel: string;
  byRequests: Panel<AdminUsageTop>;
  byRateLimited: Panel<AdminUsageTop>;
  /** `requester`: who asked (the developer's email for the portal's), in the audit page's words. */
  pending: Panel<{ items: Array<AdminPlanRequest & { requester: string | null }> }>;
  /** Every panel is one the token may not read: the page points to what it can do instead. */
  nothingReadable: boolean;
}

export interface ConsumersView extends PageModel {
  search: string;
  /** The search holds an "@": consumers with that contact email, else names starting with it. */
  byEmail: boolean;
  /** Why the admin API did not accept the search, in the console's words. */
  searchError?: string;
  page: Panel<{
    items: Array<AdminConsumer & { activeKeys: number; href: string }>;
    next: string | null;
  }>;
}

export interface ConsumerView extends PageModel {
  consumer: AdminConsumer;
  current: PlanStatement;
  path: string;
  plans: Array<{ value: string; label: string; selected: boolean }>;
  planForm: { perMinute: string | number; perDay: string | number; error?: string };
  keyTable: KeyTable;
  /** Where its credentials may be used from, as the forms hold it ('' is anywhere): the consumer's, each active key's. */
  allowedAddresses: {
    consumer: string;
    keys: Array<{ id: string; hint: string; ranges: string; action: string }>;
  };
  /** Its OAuth clients (docs/oauth.md), each with its ranges as text and its unbind form's action. */
  bindings: Panel<Array<AdminClientBinding & { ranges: string; unbindAction: string }>>;
  /** Anchor, monthly quota, current period (GET billing). */
  billing: Panel<AdminBilling>;
  /** Only when credits are in force; the ledger left out when it cannot be read. */
  credits: (CreditsPanel & { ledgerUnavailable?: Unavailable }) | null;
  /** The billing and credit forms' values (typed, or the current ones) and a refusal next to one of them. */
  billingForms: {
    error: Partial<Record<string, string>>;
    anchor: string;
    perMonth: string;
    /** The consumer's own alert thresholds ("50, 90, 100"; '' for a side of its plan's). */
    alerts: { thresholdsPercent: string; creditsLowBalance: string };
    topUp: { amount: string; reason: string };
    balance: { balance: string; reason: string };
    refill: { amount: string; every: string };
    costs: Array<{ operation: string; value: string }>;
  };
  usage: Panel<AdminCurrentUsage>;
  /** The current windows as policyCards gives them (libs/web): used, remaining, when each resets. */
  windows: PolicyCard[];
  history: Panel<UsageTable>;
  /** `actor`: the token and the person it acted for, as the audit page says it. */
  audit: Panel<Array<AdminAuditEntry & { summary: string; actor: string }>>;
}

export interface NewKeyView extends PageModel {
  heading: string;
  name: string;
  path: string;
  /** Absent on a reload: the page says the key was shown once. */
  key?: string;
  previous?: { hint: string; expiresAt: string | null };
}

export interface ConfirmView extends PageModel {
  heading: string;
  text: string;
  action: string;
  button: string;
  cancel: string;
  /** A webhook secret's rotation: how long the old secret keeps signing (secretOverlapChoices). */
  overlaps?: Array<{ value: string; label: string; selected: boolean }>;
}

export interface PlanRequestsView extends PageModel {
  statuses: Array<{ value: string; selected: boolean }>;
  status: string;
  items: Array<
    AdminPlanRequest & {
      pending: boolean;
      /** Who asked (the developer's email for the portal's), in the audit page's words; null: not kept then. */
      requester: string | null;
      consumerHref: string;
      path: string;
      /** A decline of this request refused by the page: why, beside the note, and the note as typed. */
      declineError?: string;
      typedNote?: string;
    }
  >;
  next: string | null;
}

export interface TokensView extends PageModel {
  grantable: readonly string[];
  tokens: Array<AdminToken & { state: string; active: boolean; path: string }>;
  error?: string;
  typed?: { name: string; scopes: string[]; expiresAt: string };
}

export interface NewTokenView extends PageModel {
  /** Absent on a reload: the page says the token was shown once. */
  token?: string;
  record?: { name: string; scopes: readonly string[] };
}

/** One line of the audit page: every cell a short text, so that a row reads on one line at 1280 px. */
export interface AuditRow {
  id: string;
  at: string;
  /** The token, and the person a web app named for it (`portal for dev@example.com`). */
  actor: string;
  action: string;
  /** The consumer or token changed; for a sign-in event, the person. */
  target: string;
  summary: string;
  /** The person's address when a web app named one, else the caller's. */
  source: string;
}

export interface AuditView extends PageModel {
  typed: { actor: string; target: string; action: string; from: string; to: string };
  error?: string;
  items: AuditRow[];
  next: string | null;
}

/** A failing or disabled endpoint, with the last attempt's error of its newest delivery (null: none read). */
export type FailingEndpointRow = WebhookEndpointRow & { lastError: string | null };

export interface WebhooksView extends PageModel {
  failing: Panel<{ items: FailingEndpointRow[]; total: number; shown: number }>;
  fleet: Panel<{ items: WebhookEndpointRow[] }>;
  /** The add form (webhooks:write on a fleet-wide token): what was typed and the sentences next to its fields. */
  form: WebhookFormState;
  choices: EventTypeChoice[];
}

export interface WebhookSecretView extends PageModel {
  /** Absent on a reload: the page says the secret was shown once. */
  secret?: string;
  target?: string;
  rotated?: boolean;
  /** After a rotation with an overlap: until when the old secret signs beside the new one. */
  previousSignsUntil?: string;
}

export interface WebhookDeliveriesView extends PageModel {
  endpoint: WebhookEndpointRow;
  deliveries: WebhookDeliveryRow[];
  olderHref: string | null;
}

/** The console's pages (sign-in aside: auth/) and the model each takes: `@Page('consumer')` checks a handler. */
export interface ConsoleViews {
  overview: OverviewView;
  consumers: ConsumersView;
  consumer: ConsumerView;
  'new-key': NewKeyView;
  confirm: ConfirmView;
  'plan-requests': PlanRequestsView;
  tokens: TokensView;
  'new-token': NewTokenView;
  audit: AuditView;
  webhooks: WebhooksView;
  'webhook-secret': WebhookSecretView;
  'webhook-deliveries': WebhookDeliveriesView;
}

export const Page = typedRender<ConsoleViews>();
export const renderView = typedRenderer<ConsoleViews>();
