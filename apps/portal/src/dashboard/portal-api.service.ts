import { Inject, Injectable } from '@nestjs/common';
import { isEmailAddress } from '@app/contract';
import { AdminApiError, AdminClient } from '@app/web';
import type {
  AdminConsumer,
  AdminCreatedConsumer,
  AdminCurrentUsage,
  AdminIssuedKey,
  AdminKey,
  AdminPlanRequest,
  AdminPlanRequestPage,
  AdminRotatedKey,
  AdminUsageBucket,
  AdminUsageHistory,
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
 * The portal's one way to the control plane: the admin API with the portal's own token (own consumers only, Free
 * plan only). Every call names the signed-in account's consumer; the admin API checks the token may touch it.
 */
@Injectable()
export class PortalApi {
  private readonly client: AdminClient;
  private readonly token: string;

  constructor(@Inject(PORTAL_CONFIG) config: PortalConfig) {
    this.client = new AdminClient({ baseUrl: config.adminUrl });
    this.token = config.adminToken;
  }

  /** `email`: the account's, recorded on the consumer so that operators find the developer by it. */
  createConsumer(name: string, email: string): Promise<AdminCreatedConsumer> {
    return this.client.post(this.token, '/consumers', { name, plan: 'free', ...contactEmail(email) });
  }

  /** Records the account's email on a consumer made before consumers had one (issue #37). */
  setContactEmail(name: string, email: string): Promise<AdminConsumer> {
    return this.client.patch(this.token, `/consumers/${encodeURIComponent(name)}`, contactEmail(email));
  }

  consumer(name: string): Promise<AdminConsumer> {
    return this.client.get(this.token, `/consumers/${encodeURIComponent(name)}`);
  }

  usage(name: string): Promise<AdminCurrentUsage> {
    return this.client.get(this.token, `/consumers/${encodeURIComponent(name)}/usage`);
  }

  /** The last 30 UTC days; null when the gateway has no usage history (its route is missing: 404 on the route). */
  async history(name: string, now = new Date()): Promise<AdminUsageBucket[] | null> {
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
    const from = new Date(to.getTime() - 30 * 86_400_000);
    try {
      const answer = await this.client.get<AdminUsageHistory>(
        this.token,
        `/consumers/${encodeURIComponent(name)}/usage/history`,
        {
          granularity: 'day',
          from: from.toISOString(),
          to: to.toISOString(),
        },
      );
      return answer.buckets;
    } catch (error) {
      // NOT_FOUND: a gateway without the usage-history routes (issue #23). An unknown consumer is NOT_FOUND too, but the
      // dashboard reads the consumer itself beside this call, and that call fails the page (by code, never by message).
      if (error instanceof AdminApiError && error.code === 'NOT_FOUND') return null;
      throw error;
    }
  }

  issueKey(name: string): Promise<AdminIssuedKey> {
    return this.client.post(this.token, `/consumers/${encodeURIComponent(name)}/keys`, {});
  }

  rotateKey(name: string, keyId: string, overlapSeconds: number): Promise<AdminRotatedKey> {
    return this.client.post(
      this.token,
      `/consumers/${encodeURIComponent(name)}/keys/${encodeURIComponent(keyId)}/rotate`,
      { overlapSeconds },
    );
  }

  revokeKey(name: string, keyId: string): Promise<AdminKey[]> {
    return this.client.post(
      this.token,
      `/consumers/${encodeURIComponent(name)}/keys/${encodeURIComponent(keyId)}/revoke`,
    );
  }

  async planRequests(name: string): Promise<AdminPlanRequest[]> {
    const page = await this.client.get<AdminPlanRequestPage>(this.token, '/plan-requests', {
      consumer: name,
      limit: 1000,
    });
    return page.items;
  }

  requestPlan(name: string, requestedPlan: string, expectedVolume: string, message: string): Promise<AdminPlanRequest> {
    return this.client.post(this.token, '/plan-requests', { consumer: name, requestedPlan, expectedVolume, message });
  }
}
