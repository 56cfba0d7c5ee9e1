/**
 * How far an admin token reaches (the admin API's token record: GET /token, POST /tokens): the consumers it created
 * only, and/or the consumers on some plans. Root and an unrestricted token have neither.
 */
export interface AdminTokenRestriction {
  /** Only the consumers this token created. */
  ownConsumersOnly: boolean;
  /** Only consumers on these plans; null: every plan. */
  plans: readonly string[] | null;
}

/**
 * Whether a token reaches the whole fleet: limited neither to its own consumers nor to some plans. The admin
 * policy's fleet-only routes (rule `fleet`: the fleet's usage, import and export, unban, billing and credits) refuse
 * every other token, and a restricted token sets no limits of its own nor creates tokens; the console shows what
 * those routes serve only to a fleet-wide token.
 */
export function isFleetWide(restriction: AdminTokenRestriction): boolean {
  return !restriction.ownConsumersOnly && restriction.plans === null;
}

/** What an admin token may do (issue #24); root (ADMIN_TOKEN) holds every scope. Here so that the gateway's
 * configuration (ADMIN_OIDC_ROLES, validated at start-up) checks the same names the admin policy grants. */
export const ADMIN_SCOPES = [
  'consumers:read',
  'consumers:write',
  'keys:write',
  'usage:read',
  'import',
  'export',
  'tokens:admin',
  'audit:read',
  'plan-requests:read',
  'plan-requests:write',
  'plan-requests:review',
  'webhooks:read',
  'webhooks:write',
] as const;

export type AdminScope = (typeof ADMIN_SCOPES)[number];

export function isAdminScope(value: string): value is AdminScope {
  return (ADMIN_SCOPES as readonly string[]).includes(value);
}
