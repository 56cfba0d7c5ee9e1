/** What an admin token may do (issue #24). Root (ADMIN_TOKEN) holds every scope. */
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
