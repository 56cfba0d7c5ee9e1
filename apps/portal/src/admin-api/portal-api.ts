import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { isEmailAddress, type PlanName } from '@app/contract';
import { AdminApi, AdminApiError } from '@app/web';
import type {
  AdminBilling,
  AdminCalls,
  AdminConsumer,
  AdminCreditLedger,
  AdminCreatedConsumer,
  AdminCurrentUsage,
  AdminIssuedKey,
  AdminKey,
  AdminPlanRequest,
  AdminRotatedKey,
  AdminUsageBucket,
  AdminCreatedWebhookEndpoint,
  AdminWebhookDelivery,
  AdminWebhookDeliveryPage,
  AdminWebhookEndpoint,
  AdminWebhookEndpointInput,
} from '@app/web';
import { PORTAL_CONFIG, PortalConfig } from '../config/portal.config';

/** At most this many active keys per portal account (the admin API's own cap is higher). */
export const MAX_ACTIVE_KEYS = 5;

/** Overlaps a rotation offers: the old key keeps working this long. */
export const OVERLAPS: ReadonlyArray<{ value: string; label: string; seconds: number }> = [
  { value: 'none', label: 'None: the old key stops now', seconds: 0 },
  { value: '1h', label: '1 hour', seconds: 3600 },
  { value: '24h', label: '24 hours', seconds: 86_400 },
  { value: '7d', label: '7 days', seconds: 604_800 },
];

/** The account's email as the admin API's contact email: left out if the admin API's rule would refuse it. */
function contactEmail(email: string): { email?: string } {
  return isEmailAddress(email) ? { email } : {};
}

/**
 * NOT_FOUND (by code): a gateway without this route. An unknown consumer is NOT_FOUND too, but the dashboard reads
 * the consumer itself beside these calls, and that call fails the page.
 */
function orNullWhenMissing(error: unknown): null {
  if (error instanceof AdminApiError && error.code === 'NOT_FOUND') return null;
  throw error;
}

/** The developer behind a call: the audit rows it writes name them (docs/admin-tokens.md, "Acting for users"). */
export interface Developer {
  accountId: string;
  email: string;
  /** Their address as the portal saw it: req.ip, behind a proxy as PORTAL_TRUST_PROXY allows. */
  address: string | undefined;
}

export function developerOf(account: { id: string; email: string }, request: Request): Developer {
  return { accountId: account.id, email: account.email, address: request.ip };
}

/** The admin API's bound on X-On-Behalf-Of (printable ASCII), after the admin client's percent-encoding. */
const LABEL_MAX = 320;

/** `account:<id> <email>`; past the bound (a long non-ASCII email, percent-encoded) the id alone still names them. */
export function accountLabel({ accountId, email }: Developer): string {
  const label = `account:${accountId} ${email}`;
  const encoded = label.replace(/[^\x20-\x7e]/gu, (character) => encodeURIComponent(character));
  return encoded.length <= LABEL_MAX ? label : `account:${accountId}`;
}

/**
 * The portal's one way to the control plane: the admin API with the portal's own token (own consumers only, Free
 * plan only). Every call names the signed-in account's consumer; the admin API checks the token may touch it.
 * Every call also names the developer and their address (X-On-Behalf-Of, X-End-User-Address) when the portal's
 * token may (`actsForUsers`, read once from GET /token); a token minted before that keeps working, unnamed.
 */
@Injectable()
export class PortalApi {
  private readonly logger = new Logger(PortalApi.name);
  private readonly api: AdminApi;
  private readonly token: string;
  /** Whether the token may name developers: asked once, on the first call (asked again if that read failed). */
  private actsForUsers: Promise<boolean> | undefined;

  constructor(@Inject(PORTAL_CONFIG) config: PortalConfig) {
    this.api = new AdminApi({ baseUrl: config.adminUrl });
    this.token = config.adminToken;
  }

  private mayActForUsers(): Promise<boolean> {
    this.actsForUsers ??= this.api
      .as(this.token)
      .GET('/token')
      .then(
        (record) => {
          if (!record.actsForUsers)
            this.logger.warn('The audit will not name developers: mint the portal token again with --for portal.');
          return record.actsForUsers;
        },
        (error: unknown) => {
          this.actsForUsers = undefined;
          throw error;
        },
      );
    return this.actsForUsers;
  }

  /**
   * The calls made for `by`: with the portal's token, naming the developer and their address (X-On-Behalf-Of,
   * X-End-User-Address) only when the token may send them (403 otherwise).
   */
  private async for(by: Developer): Promise<AdminCalls> {
    if (!(await this.mayActForUsers())) return this.api.as(this.token);
    return this.api.as(this.token, {
      onBehalfOf: accountLabel(by),
      ...(by.address ? { endUserAddress: by.address } : {}),
    });
  }

  /** The developer's email is recorded on the consumer, so that operators find the developer by it. */
  async createConsumer(by: Developer, name: string): Promise<AdminCreatedConsumer> {
    return (await this.for(by)).POST('/consumers', { body: { name, plan: 'free', ...contactEmail(by.email) } });
  }

  /** Records the account's email on a consumer made before consumers had one (issue #37). */
  async setContactEmail(by: Developer, name: string): Promise<AdminConsumer> {
    return (await this.for(by)).PATCH('/consumers/{name}', {
      params: { path: { name } },
      body: contactEmail(by.email),
    });
  }

  async consumer(by: Developer, name: string): Promise<AdminConsumer> {
    return (await this.for(by)).GET('/consumers/{name}', { params: { path: { name } } });
  }

  async usage(by: Developer, name: string): Promise<AdminCurrentUsage> {
    return (await this.for(by)).GET('/consumers/{name}/usage', { params: { path: { name } } });
  }

  /** Its billing anchor, monthly quota, current period and credits; null from a gateway without billing (404). */
  async billing(by: Developer, name: string): Promise<AdminBilling | null> {
    const billing: Promise<AdminBilling> = (await this.for(by)).GET('/consumers/{name}/billing', {
      params: { path: { name } },
    });
    return billing.catch(orNullWhenMissing);
  }

  /** The credits' last 30 days: ledger, spend per UTC day, projected exhaustion; null without the route (404). */
  async creditLedger(by: Developer, name: string): Promise<AdminCreditLedger | null> {
    const ledger: Promise<AdminCreditLedger> = (await this.for(by)).GET('/consumers/{name}/credits/ledger', {
      params: { path: { name }, query: { days: 30 } },
    });
    return ledger.catch(orNullWhenMissing);
  }

  /** The last 30 UTC days; null when the gateway has no usage history (its route is missing: 404 on the route). */
  async history(by: Developer, name: string, now = new Date()): Promise<AdminUsageBucket[] | null> {
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
    const from = new Date(to.getTime() - 30 * 86_400_000);
    const answer = (await this.for(by)).GET('/consumers/{name}/usage/history', {
      params: { path: { name }, query: { granularity: 'day', from: from.toISOString(), to: to.toISOString() } },
    });
    // NOT_FOUND: a gateway without the usage-history routes (issue #23); see orNullWhenMissing.
    return answer.then((history) => history.buckets, orNullWhenMissing);
  }

  async issueKey(by: Developer, name: string): Promise<AdminIssuedKey> {
    return (await this.for(by)).POST('/consumers/{name}/keys', { params: { path: { name } }, body: {} });
  }

  async rotateKey(by: Developer, name: string, keyId: string, overlapSeconds: number): Promise<AdminRotatedKey> {
    return (await this.for(by)).POST('/consumers/{name}/keys/{keyId}/rotate', {
      params: { path: { name, keyId } },
      body: { overlapSeconds },
    });
  }

  async revokeKey(by: Developer, name: string, keyId: string): Promise<AdminKey[]> {
    return (await this.for(by)).POST('/consumers/{name}/keys/{keyId}/revoke', { params: { path: { name, keyId } } });
  }

  async planRequests(by: Developer, name: string): Promise<AdminPlanRequest[]> {
    const page = await (
      await this.for(by)
    ).GET('/plan-requests', {
      params: { query: { consumer: name, limit: 1000 } },
    });
    return page.items;
  }

  async requestPlan(
    by: Developer,
    name: string,
    requestedPlan: PlanName,
    expectedVolume: string,
    message: string,
  ): Promise<AdminPlanRequest> {
    return (await this.for(by)).POST('/plan-requests', {
      body: { consumer: name, requestedPlan, expectedVolume, message },
    });
  }

  // Webhook endpoints (docs/webhooks.md): every call names the session's consumer, so an endpoint id of another
  // consumer is the admin API's 404.

  async webhookEndpoints(by: Developer, name: string): Promise<AdminWebhookEndpoint[]> {
    const list = await (await this.for(by)).GET('/consumers/{name}/webhook-endpoints', { params: { path: { name } } });
    return list.items;
  }

  async webhookEndpoint(by: Developer, name: string, id: string): Promise<AdminWebhookEndpoint> {
    return (await this.for(by)).GET('/consumers/{name}/webhook-endpoints/{id}', { params: { path: { name, id } } });
  }

  /** The endpoint with its secret in full: this answer only. */
  async createWebhookEndpoint(
    by: Developer,
    name: string,
    input: AdminWebhookEndpointInput,
  ): Promise<AdminCreatedWebhookEndpoint> {
    return (await this.for(by)).POST('/consumers/{name}/webhook-endpoints', {
      params: { path: { name } },
      body: input,
    });
  }

  async setWebhookEndpointEnabled(
    by: Developer,
    name: string,
    id: string,
    enabled: boolean,
  ): Promise<AdminWebhookEndpoint> {
    return (await this.for(by)).PATCH('/consumers/{name}/webhook-endpoints/{id}', {
      params: { path: { name, id } },
      body: { enabled },
    });
  }

  async deleteWebhookEndpoint(by: Developer, name: string, id: string): Promise<void> {
    await (await this.for(by)).DELETE('/consumers/{name}/webhook-endpoints/{id}', { params: { path: { name, id } } });
  }

  /** The endpoint with its new secret in full: this answer only. */
  async rotateWebhookSecret(
    by: Developer,
    name: string,
    id: string,
    overlapSeconds: number,
  ): Promise<AdminCreatedWebhookEndpoint> {
    return (await this.for(by)).POST('/consumers/{name}/webhook-endpoints/{id}/rotate-secret', {
      params: { path: { name, id } },
      body: { overlapSeconds },
    });
  }

  async testWebhookEndpoint(by: Developer, name: string, id: string): Promise<AdminWebhookDelivery> {
    return (await this.for(by)).POST('/consumers/{name}/webhook-endpoints/{id}/test', {
      params: { path: { name, id } },
    });
  }

  /** One page of the endpoint's deliveries, newest first; `after`: the `next` of the page before. */
  async webhookDeliveries(
    by: Developer,
    name: string,
    id: string,
    page: { after?: string; limit?: number } = {},
  ): Promise<AdminWebhookDeliveryPage> {
    return (await this.for(by)).GET('/consumers/{name}/webhook-endpoints/{id}/deliveries', {
      params: { path: { name, id }, query: page },
    });
  }

  /** A delivery to this consumer's endpoint sent again: the admin API's 404 for a delivery to any other endpoint. */
  async redeliverWebhook(
    by: Developer,
    name: string,
    endpointId: string,
    deliveryId: string,
  ): Promise<AdminWebhookDelivery> {
    return (await this.for(by)).POST('/consumers/{name}/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver', {
      params: { path: { name, id: endpointId, deliveryId } },
    });
  }
}
