import { AsyncLocalStorage } from 'node:async_hooks';
import { ApiError } from '@app/errors';
import type { AdminScope } from './admin-scopes';

/** Who makes an admin call: root (ADMIN_TOKEN), an admin token, or nobody yet (before the guard ran). */
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
}

export const ROOT_ACTOR: AdminActor = { id: null, name: 'root', scopes: 'all', ownConsumersOnly: false, plans: null };

/** One admin request: set by the admin app's first middleware, its actor filled in by the guard. */
export interface AdminRequestContext {
  actor?: AdminActor;
  requestId: string | null;
  source: string | null;
}

/**
 * The admin request in progress, for the repository's checks and the audit log, whichever service the
 * controller calls (the import included) — so that no repository method can be called without its actor.
 */
export const adminRequestContext = new AsyncLocalStorage<AdminRequestContext>();

/** The current actor; outside an admin request (startup seeding, tests calling the repository), root. */
export function currentActor(): AdminActor {
  return adminRequestContext.getStore()?.actor ?? ROOT_ACTOR;
}

export function isRestricted(actor: AdminActor): boolean {
  return actor.ownConsumersOnly || actor.plans !== null;
}

/** 403 for a token limited to its own consumers or to some plans: `what` (import, export, ...) reaches every consumer. */
export function assertUnrestricted(what: string): void {
  const actor = currentActor();
  if (isRestricted(actor)) throw new ApiError('FORBIDDEN', `Token "${actor.name}" is limited to its own consumers or to some plans: it may not ${what}.`);
}

/**
 * 403 unless the actor may act on a consumer with this creator and plan. A consumer an own-consumers token created
 * stays its own whatever plan an operator moved it to (the portal keeps serving a developer whose plan request was
 * approved); the plans it may set are still checked where a plan is set (create, update).
 */
export function assertMayTouch(actor: AdminActor, consumer: { name: string; plan: string; createdByToken: string | null }): void {
  if (actor.ownConsumersOnly && consumer.createdByToken !== actor.id) {
    throw new ApiError('FORBIDDEN', `Token "${actor.name}" may act only on the consumers it created; "${consumer.name}" is not one of them.`);
  }
  if (actor.ownConsumersOnly) return;
  assertPlanAllowed(actor, consumer.plan);
}

export function assertPlanAllowed(actor: AdminActor, plan: string): void {
  if (actor.plans !== null && !actor.plans.includes(plan)) {
    throw new ApiError('FORBIDDEN', `Token "${actor.name}" may act only on consumers on the plans ${actor.plans.join(', ')}, not ${plan}.`);
  }
}
