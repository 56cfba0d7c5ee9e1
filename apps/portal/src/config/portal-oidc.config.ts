import { ConfigurationError, plainHttpAllowed } from '@app/platform';

/**
 * A company's identity provider developers sign in with (PORTAL_OIDC_PROVIDERS, docs/sso.md): its issuer, the
 * portal's client at it, the button's name, and the email domains that must sign in with it.
 */
export interface PortalOidcProvider {
  /** In the portal's URLs: /login/oidc/<id>. */
  id: string;
  /** What the button says: "Sign in with <name>". */
  name: string;
  issuer: string;
  clientId: string;
  /** Absent: a public client (PKCE only). */
  clientSecret?: string;
  scopes: string;
  /**
   * Plain http to this provider in production (`insecureHttp`): an integration environment's stand-in on a private
   * network only (docker compose's idp profile), never a real provider.
   */
  insecureHttp: boolean;
  /** Lower-cased domains whose addresses may not use a password here: they sign in with this provider. */
  requiredDomains: readonly string[];
}

const FIELDS = ['id', 'name', 'issuer', 'clientId', 'clientSecret', 'scopes', 'requiredDomains', 'insecureHttp'];
const ID = /^[a-z0-9][a-z0-9-]{0,31}$/;
const NAME = /^[^<>&"]{1,60}$/;
const ISSUER = /^https?:\/\/[^/?#]+[^?#]*$/;
const SCOPES = /^openid( [\x21\x23-\x5B\x5D-\x7E]+)*$/;
const DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

function invalid(where: string, rule: string): never {
  throw new ConfigurationError(`Invalid configuration: ${where} ${rule} (docs/sso.md)`);
}

/**
 * PORTAL_OIDC_PROVIDERS: a JSON array of providers, read once at start-up; a wrong one stops the portal with one
 * line naming the field (never a secret's value). Unset or empty: no provider, password accounts only.
 */
export function portalOidcProvidersOf(raw: string | undefined, production: boolean): PortalOidcProvider[] {
  if (raw === undefined || raw.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    invalid('PORTAL_OIDC_PROVIDERS', 'is not valid JSON');
  }
  if (!Array.isArray(parsed) || parsed.length > 10)
    invalid('PORTAL_OIDC_PROVIDERS', 'must be a JSON array of at most 10 providers');
  const providers: PortalOidcProvider[] = [];
  const domainOwner = new Map<string, string>();
  parsed.forEach((entry: unknown, index) => {
    const where = `PORTAL_OIDC_PROVIDERS[${index}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) invalid(where, 'must be an object');
    const p = entry as Record<string, unknown>;
    const unknown = Object.keys(p).find((field) => !FIELDS.includes(field));
    if (unknown) invalid(where, `has an unknown field "${unknown}" (${FIELDS.join(', ')})`);
    if (typeof p.id !== 'string' || !ID.test(p.id)) invalid(`${where}.id`, 'must be 1-32 of a-z, 0-9 and -');
    if (providers.some((other) => other.id === p.id)) invalid(`${where}.id`, `"${p.id}" is given twice`);
    if (typeof p.name !== 'string' || !NAME.test(p.name))
      invalid(`${where}.name`, 'must be 1-60 characters, no markup');
    if (typeof p.issuer !== 'string' || !ISSUER.test(p.issuer))
      invalid(`${where}.issuer`, 'must be an http(s) URL without query');
    if (p.insecureHttp !== undefined && typeof p.insecureHttp !== 'boolean')
      invalid(`${where}.insecureHttp`, 'must be true or false');
    const insecureHttp = p.insecureHttp === true;
    if (!plainHttpAllowed(new URL(p.issuer), production, insecureHttp))
      invalid(`${where}.issuer`, 'must be an https URL in production (http only on loopback, or with insecureHttp)');
    if (typeof p.clientId !== 'string' || p.clientId === '' || p.clientId.length > 255)
      invalid(`${where}.clientId`, 'must be a string of 1-255 characters');
    if (p.clientSecret !== undefined && (typeof p.clientSecret !== 'string' || p.clientSecret === ''))
      invalid(`${where}.clientSecret`, 'must be a non-empty string when given');
    const scopes = p.scopes ?? 'openid email';
    if (typeof scopes !== 'string' || !SCOPES.test(scopes) || !scopes.split(' ').includes('email'))
      invalid(`${where}.scopes`, 'must start with openid and ask for email, scopes separated by single spaces');
    const domains = p.requiredDomains ?? [];
    if (!Array.isArray(domains) || domains.some((d) => typeof d !== 'string' || !DOMAIN.test(d.toLowerCase())))
      invalid(`${where}.requiredDomains`, 'must be an array of domain names such as example.com');
    const requiredDomains = (domains as string[]).map((d) => d.toLowerCase());
    for (const domain of requiredDomains) {
      const owner = domainOwner.get(domain);
      if (owner !== undefined) invalid(`${where}.requiredDomains`, `"${domain}" is already required by "${owner}"`);
      domainOwner.set(domain, p.id);
    }
    providers.push({
      id: p.id,
      name: p.name,
      issuer: p.issuer,
      clientId: p.clientId,
      ...(p.clientSecret !== undefined ? { clientSecret: p.clientSecret as string } : {}),
      scopes,
      insecureHttp,
      requiredDomains,
    });
  });
  return providers;
}

/** The provider an email must sign in with (its domain is one of the provider's requiredDomains), if any. */
export function providerRequiredFor(
  email: string,
  providers: readonly PortalOidcProvider[],
): PortalOidcProvider | undefined {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  return providers.find((provider) => provider.requiredDomains.includes(domain));
}
