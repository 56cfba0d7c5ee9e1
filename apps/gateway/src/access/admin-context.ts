import { ApiError } from '@app/errors';
import type { AdminScope } from './admin-scopes';

/** Who makes an admin call: root (ADMIN_TOKEN), an admin token, or nobody (a refused call). */
export interface AdminActor {
  /** The admin token's id; null for root. */
  id: string | null;
  name: string;
  scopes: readonly AdminScope[] | 'all';
  /** Only the consumers this token created. */
  ownConsumersOnly: boolean;
  /** Only consumers on these plans; null: every plan. */
  plans: readonly string[] | null;
  /** When the token stops working; null: never (root). */
  expiresAt?: Date | null;
  /** May name the end user behind its calls (X-On-Behalf-Of, X-End-User-Address): a web app's token, or root. */
  actsForUsers?: boolean;
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

export function isRestricted(actor: AdminActor): boolean {
  return actor.ownConsumersOnly || actor.plans !== null;
}

/** 403 for a token limited to its own consumers or to some plans: `what` (import, export, ...) reaches every consumer. */
export function assertUnrestricted(actor: AdminActor, what: string): void {
  if (isRestricted(actor))
    throw new ApiError(
      'FORBIDDEN',
      `Token "${actor.name}" is limited to its own consumers or to some plans: it may not ${what}.`,
    );
}

/**
 * 403 unless the actor may act on a consumer with this creator and plan. A consumer an own-consumers token created
 * stays its own whatever plan an operator moved it to (the portal keeps serving a developer whose plan request was
 * approved); the plans it may set are still checked where a plan is set (create, update).
 */
export function assertMayTouch(
  actor: AdminActor,
  consumer: { name: string; plan: string; createdByToken: string | null },
): void {
  if (actor.ownConsumersOnly && consumer.createdByToken !== actor.id) {
    throw new ApiError(
      'FORBIDDEN',
      `Token "${actor.name}" may act only on the consumers it created; "${consumer.name}" is not one of them.`,
    );
  }
  if (actor.ownConsumersOnly) return;
  assertPlanAllowed(actor, consumer.plan);
}

export function assertPlanAllowed(actor: AdminActor, plan: string): void {
  if (actor.plans !== null && !actor.plans.includes(plan)) {
    throw new ApiError(
      'FORBIDDEN',
      `Token "${actor.name}" may act only on consumers on the plans ${actor.plans.join(', ')}, not ${plan}.`,
    );
  }
}
