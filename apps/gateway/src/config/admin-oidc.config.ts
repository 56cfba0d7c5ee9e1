import { ADMIN_SCOPES, AdminScope, isAdminScope } from '@app/contract';
import { ConfigurationError, plainHttpAllowed } from '@app/platform';

/** What one role (a value of the ID token's role claim) grants a person: admin scopes and, optionally, plans only. */
export interface AdminOidcRole {
  scopes: readonly AdminScope[];
  /** Only consumers on these plans; null: every plan. */
  plans: readonly string[] | null;
}

/**
 * The identity provider operators sign in to the console with (issue #51, docs/sso.md): the gateway verifies the
 * person's ID token against it and issues a short-lived admin token named for them. Absent: no such sign-in
 * (POST /sessions/oidc answers 404).
 */
export interface AdminOidcConfig {
  /** The ID token's `iss`, and where its discovery document is. */
  issuer: string;
  /** The ID token's `aud`: the console's client id at the provider. */
  audience: string;
  /** The claim holding the person's groups or roles (a string or a list of strings). */
  rolesClaim: string;
  roles: ReadonlyMap<string, AdminOidcRole>;
  /** How long the admin token of a signed-in person lives: the bound for a role removed at the provider. */
  sessionMs: number;
  /** An ID token issued longer ago than this is refused (and each one is taken once within it). */
  maxIdTokenAgeMs: number;
  /** Tolerance on `exp` and `iat`, in seconds. */
  clockSkewS: number;
  /** Discovery and JWKS requests give up after this long. */
  timeoutMs: number;
}

function invalid(variable: string, message: string): never {
  throw new ConfigurationError(`Invalid configuration: ${variable}: ${message}`);
}

function rolesOf(json: string): Map<string, AdminOidcRole> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    invalid('ADMIN_OIDC_ROLES', `not valid JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.keys(parsed).length === 0)
    invalid(
      'ADMIN_OIDC_ROLES',
      'must be an object of role → grant, e.g. {"ops-admins": {"scopes": "all"}, "support": {"scopes": ["consumers:read", "usage:read"]}}',
    );
  const roles = new Map<string, AdminOidcRole>();
  for (const [role, raw] of Object.entries(parsed)) {
    const where = `ADMIN_OIDC_ROLES.${role}`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) invalid(where, 'must be an object');
    const grant = raw as Record<string, unknown>;
    const unknown = Object.keys(grant).find((field) => field !== 'scopes' && field !== 'plans');
    if (unknown) invalid(where, `unknown field "${unknown}" (scopes, plans)`);
    let scopes: AdminScope[];
    if (grant.scopes === 'all') scopes = [...ADMIN_SCOPES];
    else if (Array.isArray(grant.scopes) && grant.scopes.length > 0) {
      for (const scope of grant.scopes)
        if (typeof scope !== 'string' || !isAdminScope(scope))
          invalid(where, `unknown scope ${JSON.stringify(scope)} (one of ${ADMIN_SCOPES.join(', ')}, or "all")`);
      scopes = grant.scopes as AdminScope[];
    } else invalid(where, 'scopes must be "all" or a non-empty list of admin scopes');
    let plans: string[] | null = null;
    if (grant.plans !== undefined) {
      if (
        !Array.isArray(grant.plans) ||
        grant.plans.length === 0 ||
        grant.plans.some((p) => typeof p !== 'string' || p === '')
      )
        invalid(where, 'plans must be a non-empty list of plan names');
      plans = grant.plans as string[];
    }
    roles.set(role, { scopes, plans });
  }
  return roles;
}

/**
 * ADMIN_OIDC_* read and checked once, at start-up: all of issuer, audience and roles, or none of them. Plain http
 * is refused in production except on loopback (anyone on the path could swap the keys).
 */
export function adminOidcConfigOf(
  e: {
    ADMIN_OIDC_ISSUER?: string;
    ADMIN_OIDC_AUDIENCE?: string;
    ADMIN_OIDC_ROLES?: string;
    ADMIN_OIDC_ROLES_CLAIM: string;
    ADMIN_OIDC_SESSION_MINUTES: number;
  },
  production: boolean,
): AdminOidcConfig | undefined {
  const given = [e.ADMIN_OIDC_ISSUER, e.ADMIN_OIDC_AUDIENCE, e.ADMIN_OIDC_ROLES].filter(
    (value) => value !== undefined && value.trim() !== '',
  );
  if (given.length === 0) return undefined;
  if (given.length !== 3)
    invalid(
      'ADMIN_OIDC_ISSUER',
      'ADMIN_OIDC_ISSUER, ADMIN_OIDC_AUDIENCE and ADMIN_OIDC_ROLES go together (docs/sso.md)',
    );
  let url: URL | undefined;
  try {
    url = new URL(e.ADMIN_OIDC_ISSUER!);
  } catch {
    url = undefined;
  }
  if (!url || !['https:', 'http:'].includes(url.protocol) || url.search || url.hash)
    invalid('ADMIN_OIDC_ISSUER', 'must be an http(s) URL without query or fragment');
  if (!plainHttpAllowed(url, production))
    invalid('ADMIN_OIDC_ISSUER', 'must be an https URL in production (http only on loopback)');
  return {
    issuer: e.ADMIN_OIDC_ISSUER!,
    audience: e.ADMIN_OIDC_AUDIENCE!,
    rolesClaim: e.ADMIN_OIDC_ROLES_CLAIM,
    roles: rolesOf(e.ADMIN_OIDC_ROLES!),
    sessionMs: e.ADMIN_OIDC_SESSION_MINUTES * 60_000,
    maxIdTokenAgeMs: 5 * 60_000,
    clockSkewS: 60,
    timeoutMs: 5_000,
  };
}
