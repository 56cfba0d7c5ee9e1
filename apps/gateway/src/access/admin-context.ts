import type { AdminTokenRestriction } from '@app/contract';
import type { AdminScope } from './admin-scopes';

/**
 * Who makes an admin call: root (ADMIN_TOKEN), an admin token, or nobody (a refused call). Its restriction
 * (ownConsumersOnly, plans) is libs/contract's, where `isFleetWide` says which tokens the fleet-only routes admit.
 */
export interface AdminActor extends AdminTokenRestriction {
  /** The admin token's id; null for root. */
  id: string | null;
  name: string;
  scopes: readonly AdminScope[] | 'all';
  /** When the token stops working; null: never (root). */
  expiresAt?: Date | null;
  /** May name the end user behind its calls (X-On-Behalf-Of, X-End-User-Address): a web app's token, or root. */
  actsForUsers?: boolean;
  /** A person's session credential: who signed in (`<email> (<subject> at <issuer>)`, docs/sso.md); else absent. */
  person?: string | null;
}

export const ROOT_ACTOR: AdminActor = {
  id: null,
  name: 'root',
  scopes: 'all',
  ownConsumersOnly: false,
  plans: null,
  actsForUsers: true,
};

/** The actor of a call refused before any token was recognised (401). */
export const ANONYMOUS_ACTOR: AdminActor = {
  id: null,
  name: 'anonymous',
  scopes: [],
  ownConsumersOnly: false,
  plans: null,
};

/** Where an admin call comes from: set on the request by the admin app's first middleware. */
export interface AdminRequestOrigin {
  requestId: string | null;
  source: string | null;
}

/**
 * One admin call: who makes it, and from where. Passed explicitly (a required parameter) to every repository
 * method that checks an actor or writes the audit log, so that none can be called without its actor: the type
 * checker finds every caller. Not an async context store: entering one turns Node's async hooks on for good, and
 * every /v1 request of the process would pay for them (docs/decisions.md).
 */
export interface AdminRequestContext extends AdminRequestOrigin {
  actor: AdminActor;
  /** The person behind a web app's call, as a token allowed to act for users names them; absent otherwise. */
  endUser?: EndUser;
}

/** The end user behind an admin call made by the portal or the console (X-On-Behalf-Of, X-End-User-Address). */
export interface EndUser {
  /** An opaque label: `account:<id> <email>`, `operator:<name>`. */
  onBehalfOf: string | null;
  /** Their address, as the web app saw it. */
  address: string | null;
}

/**
 * Root, outside any admin request: start-up seeding (the demo key). No request id and no source, as its audit
 * rows have always had.
 */
export const ROOT_CONTEXT: Readonly<AdminRequestContext> = Object.freeze({
  actor: ROOT_ACTOR,
  requestId: null,
  source: null,
});
