import { PUBLIC_OPERATION_IDS } from '@app/contract';
import { ConfigurationError, plainHttpAllowed } from '@app/platform';

/** The signature algorithms an issuer may use unless its entry says fewer: asymmetric only (docs/oauth.md). */
export const DEFAULT_TOKEN_ALGORITHMS = ['RS256', 'ES256', 'PS256', 'EdDSA'] as const;

/**
 * Every asymmetric JWS algorithm jose verifies. Never `none`, never an HMAC one (HS*): a gateway that accepted HS256
 * would verify with the issuer's public key as the secret, which anyone can read from the JWKS.
 */
const ASYMMETRIC_ALGORITHMS: readonly string[] = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** One identity provider whose access tokens /v1 accepts (an entry of OAUTH_ISSUERS). */
export interface OAuthIssuerConfig {
  /** The `iss` of its tokens, and where its discovery document is (RFC 8414 / OpenID Connect discovery). */
  issuer: string;
  /** The `aud` a token must name: this API. */
  audience: string;
  algorithms: readonly string[];
  /** Which claim names the client a binding names: `client_id` (RFC 9068) or `sub`. */
  clientIdClaim: 'client_id' | 'sub';
  /** Tolerance on `exp`, `nbf` and `iat`, in seconds. */
  clockSkewS: number;
  /** RFC 7662 introspection of opaque tokens, client-authenticated (client_secret_basic); absent: JWTs only. */
  introspection?: { clientId: string; clientSecret: string };
  /** How long an introspection's answer is kept (never past the token's `exp`): a revoked token is refused within it. */
  introspectionCacheMs: number;
  /**
   * Most introspection requests in flight to this issuer from one instance: distinct opaque tokens beyond it get 503
   * (counted nowhere) instead of queueing, so a flood of junk tokens costs the issuer and the gateway a bounded load.
   */
  introspectionConcurrency: number;
  /**
   * Scope → the /v1 operations it allows. Absent: a token of this issuer may call every operation (the plan still
   * decides the limits); present: only the operations its scopes list.
   */
  scopes?: ReadonlyMap<string, readonly string[]>;
  /**
   * The issuer's token endpoint, for the public OpenAPI document's client-credentials scheme (Swagger UI asks it for
   * a token); absent: the document declares no OAuth scheme for this issuer. Never used to verify anything.
   */
  tokenUrl?: string;
  /** Discovery, JWKS and introspection requests give up after this long. */
  timeoutMs: number;
  /** At most one refetch of the JWKS per this interval for a `kid` the gateway does not hold. */
  jwksCooldownMs: number;
  /** The JWKS is refetched in the background when older than this (the known keys keep verifying meanwhile). */
  jwksMaxAgeMs: number;
}

export interface OAuthConfig {
  issuers: readonly OAuthIssuerConfig[];
  /** Most verified tokens held (OAUTH_TOKEN_CACHE_SIZE), least recently used evicted first. */
  tokenCacheSize: number;
}

const ISSUER_FIELDS = new Set([
  'issuer',
  'audience',
  'algorithms',
  'clientIdClaim',
  'clockSkewSeconds',
  'introspection',
  'introspectionCacheSeconds',
  'introspectionConcurrency',
  'scopes',
  'tokenUrl',
  'timeoutMs',
  'jwksCooldownMs',
  'jwksMaxAgeMs',
  'insecureHttp',
]);

function invalid(message: string): never {
  throw new ConfigurationError(`Invalid configuration: OAUTH_ISSUERS: ${message}`);
}

function integerIn(value: unknown, min: number, max: number, fallback: number, where: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > max)
    invalid(`${where} must be an integer from ${min} to ${max}`);
  return value as number;
}

const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.trim().length > 0;

function issuerUrl(value: unknown, where: string, production: boolean, insecureHttp: boolean): string {
  let url: URL | undefined;
  try {
    url = nonEmptyString(value) ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || !['https:', 'http:'].includes(url.protocol) || url.search || url.hash)
    invalid(`${where}.issuer must be an http(s) URL without query or fragment`);
  if (!plainHttpAllowed(url, production, insecureHttp))
    invalid(`${where}.issuer must be an https URL in production (http only on loopback, or with insecureHttp)`);
  return value as string;
}

function tokenUrlOf(value: unknown, where: string): string {
  try {
    if (nonEmptyString(value) && ['https:', 'http:'].includes(new URL(value).protocol)) return value;
  } catch {
    // refused below
  }
  return invalid(`${where}.tokenUrl must be an http(s) URL (the issuer's token endpoint)`);
}

function scopesOf(value: unknown, where: string): Map<string, readonly string[]> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length === 0)
    invalid(`${where}.scopes must be an object of scope → operations, e.g. {"pets:read": ["listPets", "getPet"]}`);
  const scopes = new Map<string, readonly string[]>();
  for (const [scope, operations] of Object.entries(value)) {
    if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope)) invalid(`${where}.scopes: "${scope}" is not a scope token`);
    if (!Array.isArray(operations) || operations.length === 0)
      invalid(`${where}.scopes.${scope} must be a non-empty list of operations`);
    for (const operation of operations)
      if (!(PUBLIC_OPERATION_IDS as readonly unknown[]).includes(operation))
        invalid(
          `${where}.scopes.${scope}: unknown operation ${JSON.stringify(operation)} (one of ${PUBLIC_OPERATION_IDS.join(', ')})`,
        );
    scopes.set(scope, operations as string[]);
  }
  return scopes;
}

function issuerOf(raw: unknown, index: number, production: boolean): OAuthIssuerConfig {
  const where = `[${index}]`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) invalid(`${where} must be an object`);
  const entry = raw as Record<string, unknown>;
  const unknown = Object.keys(entry).find((field) => !ISSUER_FIELDS.has(field));
  if (unknown) invalid(`${where}: unknown field "${unknown}" (one of ${[...ISSUER_FIELDS].join(', ')})`);
  if (entry.insecureHttp !== undefined && typeof entry.insecureHttp !== 'boolean')
    invalid(`${where}.insecureHttp must be true or false`);
  const issuer = issuerUrl(entry.issuer, where, production, entry.insecureHttp === true);
  if (!nonEmptyString(entry.audience)) invalid(`${where}.audience must be a non-empty string (this API's identifier)`);
  let algorithms: readonly string[] = DEFAULT_TOKEN_ALGORITHMS;
  if (entry.algorithms !== undefined) {
    if (!Array.isArray(entry.algorithms) || entry.algorithms.length === 0)
      invalid(`${where}.algorithms must be a non-empty list`);
    for (const alg of entry.algorithms)
      if (!ASYMMETRIC_ALGORITHMS.includes(alg as string))
        invalid(
          `${where}.algorithms: ${JSON.stringify(alg)} is not allowed (asymmetric algorithms only, never none or HS*: ${ASYMMETRIC_ALGORITHMS.join(', ')})`,
        );
    algorithms = entry.algorithms as string[];
  }
  const clientIdClaim = entry.clientIdClaim ?? 'client_id';
  if (clientIdClaim !== 'client_id' && clientIdClaim !== 'sub')
    invalid(`${where}.clientIdClaim must be client_id or sub`);
  let introspection: OAuthIssuerConfig['introspection'];
  if (entry.introspection !== undefined) {
    const given = entry.introspection as Record<string, unknown> | null;
    if (
      typeof given !== 'object' ||
      given === null ||
      !nonEmptyString(given.clientId) ||
      !nonEmptyString(given.clientSecret)
    )
      invalid(`${where}.introspection must be {"clientId": "...", "clientSecret": "..."}`);
    introspection = { clientId: given.clientId, clientSecret: given.clientSecret };
  }
  return {
    issuer,
    audience: entry.audience,
    algorithms,
    clientIdClaim,
    clockSkewS: integerIn(entry.clockSkewSeconds, 0, 300, 60, `${where}.clockSkewSeconds`),
    introspection,
    introspectionCacheMs:
      integerIn(entry.introspectionCacheSeconds, 0, 3600, 30, `${where}.introspectionCacheSeconds`) * 1000,
    introspectionConcurrency: integerIn(
      entry.introspectionConcurrency,
      1,
      1000,
      32,
      `${where}.introspectionConcurrency`,
    ),
    scopes: scopesOf(entry.scopes, where),
    tokenUrl: entry.tokenUrl === undefined ? undefined : tokenUrlOf(entry.tokenUrl, where),
    timeoutMs: integerIn(entry.timeoutMs, 100, 60_000, 5_000, `${where}.timeoutMs`),
    jwksCooldownMs: integerIn(entry.jwksCooldownMs, 0, 3_600_000, 30_000, `${where}.jwksCooldownMs`),
    jwksMaxAgeMs: integerIn(entry.jwksMaxAgeMs, 1_000, 86_400_000, 600_000, `${where}.jwksMaxAgeMs`),
  };
}

/**
 * OAUTH_ISSUERS (a JSON list of issuers, docs/oauth.md) parsed and checked once, at start-up; unset or `[]`: /v1
 * takes API keys only. Each problem is one line naming the entry and the field.
 */
export function oauthConfigOf(
  issuersJson: string | undefined,
  tokenCacheSize: number,
  production: boolean,
): OAuthConfig {
  if (issuersJson === undefined || issuersJson.trim() === '') return { issuers: [], tokenCacheSize };
  let parsed: unknown;
  try {
    parsed = JSON.parse(issuersJson);
  } catch (error) {
    invalid(`not valid JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(parsed))
    invalid('must be a JSON list of issuers, e.g. [{"issuer": "https://…", "audience": "…"}]');
  const issuers = parsed.map((entry, index) => issuerOf(entry, index, production));
  const seen = new Set<string>();
  for (const { issuer } of issuers) {
    if (seen.has(issuer)) invalid(`issuer ${issuer} is listed twice`);
    seen.add(issuer);
  }
  return { issuers, tokenCacheSize };
}
