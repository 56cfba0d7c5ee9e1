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
