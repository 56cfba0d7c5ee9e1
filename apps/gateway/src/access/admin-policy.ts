import { isFleetWide } from '@app/contract';
import { ApiError } from '@app/errors';
import type { AdminActor } from './admin-context';
import type { AdminScope } from './admin-scopes';

/**
 * What an admin route reaches, and so how a restricted token (ownConsumersOnly, plans) is held to its part:
 * - `self`: only the calling token's own record;
 * - `fleet`: every consumer at once (or a ban, an operator's decision): refused (403) to a restricted token;
 * - `consumer`: one named consumer: 403 outside the token's own consumers / plans; a plan it sets must be one of
 *   its plans, and a restricted token sets no limits of its own (null, the plan's, only);
 * - `consumers`, `plan-requests`, `audit`: lists, filtered to the token's own consumers / plans;
 * - `plan-request`: a decision: never an ownConsumersOnly token (403); a plans token only for consumers on its plans;
 * - `token-create`: a child never outlives nor outranks its creator (expiry ≤, scopes ⊆); a restricted token creates none;
 * - `tokens`: a restricted token lists only the tokens it created (and theirs);
 * - `token`: a token revokes only a token it could have created (403); a restricted token only its own children
 *   (404 for any other: existence does not leak); a revocation takes the token's descendants with it.
 * - `end-user`: names a person (an audit event: a sign-in): only root and a token created with `actsForUsers` (the
 *   web apps'), restricted or not; 403 for any other token, whatever its scopes.
 * - `sign-in`: no admin token at all: the person's ID token in the body is the credential (docs/sso.md);
 * - `session`: only a person's session credential, about itself (its sign-out); 403 for any other token.
 */
export const OBJECT_RULES = [
  'self',
  'fleet',
  'consumer',
  'consumers',
  'plan-request',
  'plan-requests',
  'audit',
  'token-create',
  'tokens',
  'token',
  'end-user',
  'sign-in',
  'session',
] as const;
export type ObjectRule = (typeof OBJECT_RULES)[number];

/** What a restricted token meets under each rule: the admin OpenAPI document and docs/admin-tokens.md say it. */
export const OBJECT_RULE_TEXT: Record<ObjectRule, string> = {
  self: 'its own record only',
  fleet: "refused (403) to a restricted token: an operator's route (every consumer at once, or a ban)",
  consumer: 'own consumers / plans only (403 outside); a plan set must be one of its plans; no limits of its own (403)',
  consumers: 'lists only its own consumers / those on its plans',
  'plan-request': 'never an ownConsumersOnly token (403); a plans token only for consumers on its plans (403)',
  'plan-requests': "lists only its own consumers' / its plans' requests",
  audit: "lists only the rows about its own consumers / its plans' consumers",
  'token-create': "a restricted token creates none (403); a child's scopes ⊆ and expiry ≤ its creator's (403)",
  tokens: 'a restricted token lists only the tokens it created',
  token: 'only a token it could have created (403); a restricted token: only its own children (404 for others)',
  'end-user': "any token created with actsForUsers (a web app's) may; any other token is refused (403)",
  'sign-in': "no admin token: the person's ID token is the credential (403 for a person with no mapped role)",
  session: "only a person's session credential, about itself (403 for any other token)",
};

export interface RoutePolicy {
  /**
   * Every scope the route needs (root holds all); `any`: any valid token; `none`: no admin token (the route checks a
   * credential of its own: a person's ID token), reachable from the admin API's network only, like every route.
   */
  scopes: readonly AdminScope[] | 'any' | 'none';
  objects: ObjectRule;
}

/**
 * THE authorization policy of the admin API (issue #36): every admin route, by operationId, with the scopes it
 * needs and what it reaches. AdminTokenGuard consults it on every call (a route without an entry refuses
 * everyone, root included); the use cases apply the object rules through the functions below; the admin OpenAPI
 * document, docs/admin-tokens.md and test/e2e/admin-api/policy-table.e2e-spec.ts are derived from it. Start-up fails when a
 * route has no entry or an entry no route.
 */
export const ADMIN_POLICY = {
  getCurrentToken: { scopes: 'any', objects: 'self' },
  listConsumers: { scopes: ['consumers:read'], objects: 'consumers' },
  getConsumer: { scopes: ['consumers:read'], objects: 'consumer' },
  createConsumer: { scopes: ['consumers:write'], objects: 'consumer' },
  updateConsumer: { scopes: ['consumers:write'], objects: 'consumer' },
  disableConsumer: { scopes: ['consumers:write'], objects: 'consumer' },
  enableConsumer: { scopes: ['consumers:write'], objects: 'consumer' },
  unbanConsumer: { scopes: ['consumers:write'], objects: 'fleet' },
  issueKey: { scopes: ['keys:write'], objects: 'consumer' },
  revokeConsumerKeys: { scopes: ['keys:write'], objects: 'consumer' },
  revokeKey: { scopes: ['keys:write'], objects: 'consumer' },
  rotateKey: { scopes: ['keys:write'], objects: 'consumer' },
  // Restricting where a key may be used from only narrows what it can do: open to its consumer's own tokens.
  updateKey: { scopes: ['keys:write'], objects: 'consumer' },
  listClientBindings: { scopes: ['consumers:read'], objects: 'consumer' },
  // A client id is an identity the customer's IdP asserts, which no developer can prove is theirs: binding one is an
  // operator's decision (a restricted token binding a stranger's client would take over its tokens). Unbinding its
  // own consumer's client is a revocation, open like revoking its keys.
  createClientBinding: { scopes: ['keys:write'], objects: 'fleet' },
  deleteClientBinding: { scopes: ['keys:write'], objects: 'consumer' },
  updateClientBinding: { scopes: ['keys:write'], objects: 'consumer' },
  getConsumerUsage: { scopes: ['usage:read'], objects: 'consumer' },
  getConsumerUsageHistory: { scopes: ['usage:read'], objects: 'consumer' },
  getConsumerBilling: { scopes: ['consumers:read'], objects: 'consumer' },
  // A restricted token must not lift a monthly quota (the same hole as limits above the plan): operators only.
  updateConsumerBilling: { scopes: ['consumers:write'], objects: 'fleet' },
  // A balance is money: only operators add or set it; an own-consumers token reads its consumers' ledger.
  topUpConsumerCredits: { scopes: ['consumers:write'], objects: 'fleet' },
  setConsumerCredits: { scopes: ['consumers:write'], objects: 'fleet' },
  getConsumerCreditLedger: { scopes: ['consumers:read'], objects: 'consumer' },
  getFleetUsageHistory: { scopes: ['usage:read'], objects: 'fleet' },
  getTopConsumers: { scopes: ['usage:read'], objects: 'fleet' },
  exportUsage: { scopes: ['usage:read'], objects: 'fleet' },
  // An import creates and changes consumers and adds keys whose hashes the file chose: bounded like those routes.
  importConsumers: { scopes: ['import', 'consumers:write', 'keys:write'], objects: 'fleet' },
  exportConsumers: { scopes: ['export'], objects: 'fleet' },
  createAdminToken: { scopes: ['tokens:admin'], objects: 'token-create' },
  listAdminTokens: { scopes: ['tokens:admin'], objects: 'tokens' },
  revokeAdminToken: { scopes: ['tokens:admin'], objects: 'token' },
  listAuditEntries: { scopes: ['audit:read'], objects: 'audit' },
  listPlanRequests: { scopes: ['plan-requests:read'], objects: 'plan-requests' },
  createPlanRequest: { scopes: ['plan-requests:write'], objects: 'consumer' },
  approvePlanRequest: { scopes: ['plan-requests:review'], objects: 'plan-request' },
  declinePlanRequest: { scopes: ['plan-requests:review'], objects: 'plan-request' },
  // Webhooks (docs/webhooks.md): a consumer's endpoints and deliveries are its owner's; the fleet-wide ones an operator's.
  listWebhookEndpoints: { scopes: ['webhooks:read'], objects: 'consumer' },
  createWebhookEndpoint: { scopes: ['webhooks:write'], objects: 'consumer' },
  getWebhookEndpoint: { scopes: ['webhooks:read'], objects: 'consumer' },
  updateWebhookEndpoint: { scopes: ['webhooks:write'], objects: 'consumer' },
  deleteWebhookEndpoint: { scopes: ['webhooks:write'], objects: 'consumer' },
  rotateWebhookEndpointSecret: { scopes: ['webhooks:write'], objects: 'consumer' },
  testWebhookEndpoint: { scopes: ['webhooks:write'], objects: 'consumer' },
  listWebhookDeliveries: { scopes: ['webhooks:read'], objects: 'consumer' },
  redeliverWebhookDelivery: { scopes: ['webhooks:write'], objects: 'consumer' },
  listFleetWebhookEndpoints: { scopes: ['webhooks:read'], objects: 'fleet' },
  createFleetWebhookEndpoint: { scopes: ['webhooks:write'], objects: 'fleet' },
  getFleetWebhookEndpoint: { scopes: ['webhooks:read'], objects: 'fleet' },
  updateFleetWebhookEndpoint: { scopes: ['webhooks:write'], objects: 'fleet' },
  deleteFleetWebhookEndpoint: { scopes: ['webhooks:write'], objects: 'fleet' },
  rotateFleetWebhookEndpointSecret: { scopes: ['webhooks:write'], objects: 'fleet' },
  listFleetWebhookDeliveries: { scopes: ['webhooks:read'], objects: 'fleet' },
  redeliverFleetWebhookDelivery: { scopes: ['webhooks:write'], objects: 'fleet' },
  listFailingWebhookEndpoints: { scopes: ['webhooks:read'], objects: 'fleet' },
  testFleetWebhookEndpoint: { scopes: ['webhooks:write'], objects: 'fleet' },
  // A consumer's threshold events: the bodies its webhooks were sent, so the webhooks' scope (the portal's token holds it).
  listThresholdEvents: { scopes: ['webhooks:read'], objects: 'consumer' },
  // A sign-in, a failed one or a lockout in the portal or the console: it names a person, like X-On-Behalf-Of.
  recordAuditEvent: { scopes: 'any', objects: 'end-user' },
  // A person signs in to the console with their identity provider: the gateway, not the console, issues their
  // short-lived admin token (the console holds none that could), and ends it at their sign-out (docs/sso.md).
  createPersonSession: { scopes: 'none', objects: 'sign-in' },
  endPersonSession: { scopes: 'any', objects: 'session' },
} as const satisfies Record<string, RoutePolicy>;

export type AdminOperationId = keyof typeof ADMIN_POLICY;

/** Whether a route takes no admin token (`scopes: 'none'`): the guard lets it through, its handler checks the rest. */
export function takesNoAdminToken(operationId: string | undefined): boolean {
  return policyOf(operationId)?.scopes === 'none';
}

export function policyOf(operationId: string | undefined): RoutePolicy | undefined {
  return operationId !== undefined && Object.hasOwn(ADMIN_POLICY, operationId)
    ? (ADMIN_POLICY as Record<string, RoutePolicy>)[operationId]
    : undefined;
}

/**
 * The route-level part of the policy, for the guard: why `actor` may not call the route, or null. The object
 * part (which consumer, token, request) is the use case's, through the checks below.
 */
export function routeRefusal(actor: AdminActor, operationId: string | undefined, route: string): string | null {
  const policy = policyOf(operationId);
  if (!policy) return `${route} has no entry in the admin policy: refused to every token.`;
  if (policy.scopes === 'none' || actor.scopes === 'all') return null;
  if (policy.scopes !== 'any') {
    const held = actor.scopes;
    const missing = policy.scopes.filter((scope) => !held.includes(scope));
    if (missing.length > 0) return `Token "${actor.name}" lacks the scope ${missing.join(', ')} that ${route} needs.`;
  }
  if (policy.objects === 'end-user' && actor.actsForUsers !== true)
    return `Token "${actor.name}" may not record events about people: only tokens created with actsForUsers may (${route}).`;
  if (policy.objects === 'session' && !actor.person)
    return `Token "${actor.name}" is no person's session: ${route} ends a signed-in person's own session only.`;
  if (policy.objects === 'fleet' && !isFleetWide(actor))
    return `Token "${actor.name}" is limited to its own consumers or to some plans: ${route} is an operator's (every consumer, or a ban).`;
  return null;
}

// --- object checks: every use case reaches consumers, plan requests, audit rows and tokens through these -----

/**
 * 403 unless the actor may act on a consumer with this creator and plan. A consumer an own-consumers token created
 * stays its own whatever plan an operator moved it to (the portal keeps serving a developer whose plan request was
 * approved); the plans it may set are still checked where a plan is set (assertMaySetPlan).
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

function assertPlanAllowed(actor: AdminActor, plan: string): void {
  if (actor.plans !== null && !actor.plans.includes(plan)) {
    throw new ApiError(
      'FORBIDDEN',
      `Token "${actor.name}" may act only on consumers on the plans ${actor.plans.join(', ')}, not ${plan}.`,
    );
  }
}

/**
 * A plan and limits the actor sets on a consumer (create, update, an approval): the plan must be one of its plans,
 * and a restricted token sets no limits of its own (null: the plan's): a plan's name says nothing of its limits.
 */
export function assertMaySetPlan(actor: AdminActor, plan: string, limits: unknown): void {
  assertPlanAllowed(actor, plan);
  if (!isFleetWide(actor) && limits !== null && limits !== undefined)
    throw new ApiError(
      'FORBIDDEN',
      `Token "${actor.name}" is limited to its own consumers or to some plans: it may not set limits of its own (only the plan's).`,
    );
}

/** A plan request's decision: never an own-consumers token; a plans token within its plans (checked by the approval's update). */
export function assertMayReview(actor: AdminActor): void {
  if (actor.ownConsumersOnly)
    throw new ApiError(
      'FORBIDDEN',
      `Token "${actor.name}" acts only on the consumers it created: it cannot decide plan requests.`,
    );
}

/** Which consumers a list (consumers, plan requests, audit rows) shows the actor: all (null), or these. */
export function consumerFilter(actor: AdminActor): { createdByToken?: string; plans?: string[] } | null {
  if (actor.ownConsumersOnly) return { createdByToken: actor.id ?? '' };
  if (actor.plans !== null) return { plans: [...actor.plans] };
  return null;
}

/** A token's grant, as the policy compares two of them. */
export interface TokenGrant {
  scopes: readonly string[];
  ownConsumersOnly: boolean;
  plans: readonly string[] | null;
  expiresAt: Date | null;
}

/** Why `actor` could not have created a token with this grant, or null: a child never outranks nor outlives it. */
export function grantRefusal(actor: AdminActor, grant: TokenGrant): string | null {
  if (actor.scopes === 'all') return null;
  const held = actor.scopes as readonly string[];
  const missing = grant.scopes.filter((scope) => !held.includes(scope));
  if (missing.length > 0) return `Token "${actor.name}" cannot grant scopes it does not hold: ${missing.join(', ')}.`;
  if (actor.ownConsumersOnly && !grant.ownConsumersOnly)
    return `Token "${actor.name}" is limited to its own consumers: so is any token it grants.`;
  if (actor.plans !== null && (grant.plans === null || grant.plans.some((plan) => !actor.plans!.includes(plan))))
    return `Token "${actor.name}" is limited to the plans ${actor.plans.join(', ')}: so is any token it grants.`;
  const until = actor.expiresAt ?? null;
  if (until !== null && (grant.expiresAt === null || grant.expiresAt.getTime() > until.getTime()))
    return `Token "${actor.name}" expires at ${until.toISOString()}: a token it grants cannot outlive it.`;
  return null;
}

/** 403 unless the actor could have created this token (creating one, or revoking one). */
export function assertMayGrant(actor: AdminActor, grant: TokenGrant): void {
  const refusal = grantRefusal(actor, grant);
  if (refusal) throw new ApiError('FORBIDDEN', refusal);
  // Kept from #24: a restricted token is a front end's, not an operator's; it hands out no tokens at all.
  if (actor.scopes !== 'all' && !isFleetWide(actor))
    throw new ApiError(
      'FORBIDDEN',
      `Token "${actor.name}" is limited to its own consumers or to some plans: it may not create tokens.`,
    );
}

/** Whether the actor sees only the tokens it created (and theirs): a restricted token does. */
export function seesOnlyOwnTokens(actor: AdminActor): boolean {
  return actor.scopes !== 'all' && !isFleetWide(actor);
}
