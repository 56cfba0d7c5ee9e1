import { adminOidcConfigOf } from './admin-oidc.config';

const base = { ADMIN_OIDC_ROLES_CLAIM: 'groups', ADMIN_OIDC_SESSION_MINUTES: 15 };
const full = {
  ...base,
  ADMIN_OIDC_ISSUER: 'https://login.example.com',
  ADMIN_OIDC_AUDIENCE: 'petstore-console',
  ADMIN_OIDC_ROLES: JSON.stringify({
    'ops-admins': { scopes: 'all' },
    support: { scopes: ['consumers:read'], plans: ['free'] },
  }),
};

describe('ADMIN_OIDC_* (docs/sso.md)', () => {
  it('is off when unset, and maps roles to scopes and plans', () => {
    expect(adminOidcConfigOf(base, true)).toBeUndefined();
    const config = adminOidcConfigOf(full, true)!;
    expect(config.roles.get('ops-admins')?.scopes).toContain('tokens:admin');
    expect(config.roles.get('support')).toEqual({ scopes: ['consumers:read'], plans: ['free'] });
    expect(config.sessionMs).toBe(15 * 60_000);
  });

  it.each([
    [{ ...full, ADMIN_OIDC_AUDIENCE: undefined }, /go together/],
    [
      { ...full, ADMIN_OIDC_ROLES: '{"a": {"scopes": ["everything"]}}' },
      /ADMIN_OIDC_ROLES.a: unknown scope "everything"/,
    ],
    [{ ...full, ADMIN_OIDC_ROLES: '{"a": {"scopes": "all", "admin": true}}' }, /unknown field "admin"/],
    [{ ...full, ADMIN_OIDC_ROLES: '[]' }, /must be an object of role/],
    [{ ...full, ADMIN_OIDC_ROLES: '{' }, /not valid JSON/],
    [{ ...full, ADMIN_OIDC_ISSUER: 'http://login.example.com' }, /https URL in production/],
  ])('refuses a wrong value at start-up with one line naming it (%#)', (env, message) => {
    expect(() => adminOidcConfigOf(env, true)).toThrow(message);
  });
});
