import { isFleetWide } from '@app/contract';
import type { AdminTokenRestriction } from '@app/contract';
import type { Request } from 'express';
import type { AdminCurrentToken, AdminEndUser } from '@app/web';

/** What the session holds for a signed-in operator: the token, sealed (TokenVault), and who it is (GET /token). */
export interface Operator extends AdminCurrentToken {
  sealedToken: string;
  /**
   * A person signed in with the identity provider (docs/sso.md): their email, who they are as the audit names them,
   * and their ID token sealed (the provider's sign-out names the session with it). Absent: a pasted admin token.
   */
  person?: { email: string; label: string; sealedIdToken: string };
}

declare module 'express-session' {
  interface SessionData {
    operator?: Operator;
  }
}

/**
 * What the operator may do, derived from the token's scopes and its restriction (own consumers, plans): every write button and form on every page is
 * shown only when its flag is set, so a read-only token sees no write action (the admin API refuses it anyway).
 */
export interface Abilities {
  consumersWrite: boolean;
  /**
   * Billing and credits (anchor, monthly quota, top-ups, balance, refill, costs): `consumers:write` on a fleet-wide
   * token (`isFleetWide`: the admin policy's fleet-only routes refuse a restricted token).
   */
  billingWrite: boolean;
  keysWrite: boolean;
  tokensAdmin: boolean;
  auditRead: boolean;
  /** One consumer's usage (`usage:read`). */
  usageRead: boolean;
  /** The fleet's usage and top lists: `usage:read` on a fleet-wide token (`isFleetWide`, as the admin policy). */
  fleetUsageRead: boolean;
  planRequestsRead: boolean;
  planRequestsReview: boolean;
  /** The failing endpoints across consumers and the fleet-wide ones: `webhooks:read` on a fleet-wide token. */
  webhooksRead: boolean;
  /** Fleet-wide endpoints added and deleted: `webhooks:write` on a fleet-wide token. */
  webhooksWrite: boolean;
}

export function abilitiesOf(scopes: readonly string[], restriction: AdminTokenRestriction): Abilities {
  const has = (scope: string) => scopes.includes(scope);
  // The admin policy's own rule (libs/contract): its fleet-only routes refuse a token that is not fleet-wide.
  const fleetWide = isFleetWide(restriction);
  return {
    consumersWrite: has('consumers:write'),
    billingWrite: has('consumers:write') && fleetWide,
    keysWrite: has('keys:write'),
    tokensAdmin: has('tokens:admin'),
    auditRead: has('audit:read'),
    usageRead: has('usage:read'),
    fleetUsageRead: has('usage:read') && fleetWide,
    planRequestsRead: has('plan-requests:read'),
    planRequestsReview: has('plan-requests:review'),
    webhooksRead: has('webhooks:read') && fleetWide,
    webhooksWrite: has('webhooks:write') && fleetWide,
  };
}

/**
 * What a change names in the audit besides the token (whose name already names the operator): the operator's address
 * as the console saw it (req.ip, CONSOLE_TRUST_PROXY), only when their token may send it (actsForUsers: root, or a
 * token root made so); any other token would be refused 403 for it (docs/console.md).
 */
export function endUserOf(request: Request): AdminEndUser {
  return request.session.operator?.actsForUsers === true && request.ip ? { endUserAddress: request.ip } : {};
}

/**
 * A value the OperatorGuard sets for each request in progress (in memory only, gone with the request) and the
 * controllers read; reading it where the guard did not run is a programming error, named by `what`.
 */
function perRequest<T>(what: string): { set(request: Request, value: T): void; get(request: Request): T } {
  const values = new WeakMap<Request, T>();
  return {
    set: (request, value) => void values.set(request, value),
    get: (request) => {
      const value = values.get(request);
      if (value === undefined) throw new Error(`no ${what} for this request: the OperatorGuard must run first`);
      return value;
    },
  };
}

/** The opened token of each request in progress. */
const tokens = perRequest<string>('operator token');
/**
 * What the operator of each request in progress may do: computed once by the OperatorGuard from the token's record
 * it has just read (GET /token), read by the controllers (abilitiesOfRequest) and the views (response.locals.can).
 */
const abilities = perRequest<Abilities>('operator abilities');

export const setAbilitiesOf = abilities.set;
/** What the signed-in operator may do (the OperatorGuard computed it for this request). */
export const abilitiesOfRequest = abilities.get;
export const setTokenOf = tokens.set;
/** The signed-in operator's token (the OperatorGuard opened it for this request). */
export const tokenOf = tokens.get;
