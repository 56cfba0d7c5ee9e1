import type { components } from './generated/admin-api';

/**
 * The admin API's answers, as its committed OpenAPI document (gateway/admin-openapi.json) describes them: the types
 * are generated from it (`npm run client:generate`), so a page can never read a field the API does not send.
 */
type Schemas = components['schemas'];

export type AdminConsumer = Schemas['ConsumerResponse'];
export type AdminConsumerPage = Schemas['ConsumerPageResponse'];
export type AdminKey = Schemas['KeyResponse'];
export type AdminIssuedKey = Schemas['IssuedKeyResponse'];
export type AdminCreatedConsumer = Schemas['CreatedConsumerResponse'];
/** An OAuth client bound to a consumer (docs/oauth.md). */
export type AdminClientBinding = Schemas['ClientBindingResponse'];
export type AdminRotatedKey = Schemas['RotatedKeyResponse'];
export type AdminCurrentUsage = Schemas['UsageResponse'];
export type AdminWindowUsage = Schemas['WindowUsageResponse'];
export type AdminUsageHistory = Schemas['UsageHistoryResponse'];
export type AdminUsageBucket = Schemas['UsageBucketResponse'];
export type AdminUsageTop = Schemas['UsageTopResponse'];
export type AdminRankedConsumer = Schemas['RankedConsumerResponse'];
export type AdminPlanRequest = Schemas['PlanRequestResponse'];
export type AdminPlanRequestPage = Schemas['PlanRequestPageResponse'];
export type AdminAuditEntry = Schemas['AuditEntryResponse'];
export type AdminAuditPage = Schemas['AuditPageResponse'];
export type AdminToken = Schemas['AdminTokenResponse'];
export type AdminCreatedToken = Schemas['CreatedAdminTokenResponse'];
export type AdminCurrentToken = Schemas['CurrentTokenResponse'];
export type AdminBillingUpdate = Schemas['UpdateBillingDto'];

/** The admin API's scope names (its document's enum): a page checks a scope by a name the compiler knows. */
export type AdminScope = AdminCurrentToken['scopes'][number];

/** A sign-in, a failed one or a lockout, as a web app reports it for the audit (POST /audit/events). */
export type AdminAuditEvent = Schemas['RecordAuditEventDto'];

/** A consumer's billing: anchor, monthly quota, current period, and its credits (null: not in force). */
export type AdminBilling = Schemas['BillingResponse'];
export type AdminCredits = Schemas['CreditsResponse'];
export type AdminLedgerEntry = Schemas['LedgerEntryResponse'];
export type AdminCreditLedger = Schemas['LedgerResponse'];

/** Webhook endpoints and their deliveries (docs/webhooks.md): secrets masked but in create's and rotate's answers. */
export type AdminWebhookEndpoint = Schemas['WebhookEndpointResponse'];
export type AdminCreatedWebhookEndpoint = Schemas['CreatedWebhookEndpointResponse'];
export type AdminWebhookEndpointInput = Schemas['CreateWebhookEndpointDto'];
export type AdminWebhookDelivery = Schemas['WebhookDeliveryResponse'];
export type AdminWebhookDeliveryPage = Schemas['WebhookDeliveryPageResponse'];
/** An endpoint of the failing list, with its newest attempt's error, status and time. */
export type AdminFailingWebhookEndpoint = Schemas['FailingWebhookEndpointResponse'];
/** Why the admin API refused a webhook URL (`WEBHOOK_TARGET_REFUSED`'s `details.reason`), as its document names them. */
export type AdminWebhookTargetRefusalReason = NonNullable<Schemas['Error']['details']>['reason'];
/** The event types an endpoint may filter on, as the admin API's document names them. */
export type AdminWebhookEventType = NonNullable<AdminWebhookEndpoint['eventTypes']>[number];
/** A consumer's own alert thresholds (PATCH billing `alerts`, docs/alerts.md). */
export type AdminAlertThresholds = Schemas['AlertThresholdsBody'];
