import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { OAuthIssuerConfig } from '../config/oauth.config';
import { issuerJson } from './issuer-http';
import { IssuerKeys, IssuerUnreachable } from './issuer-keys';

/** An access token the gateway verified: whose client it is, what it may call, until when it is good. */
export interface VerifiedToken {
  issuer: OAuthIssuerConfig;
  clientId: string;
  scopes: readonly string[];
  /** Wall-clock ms after which it is verified again (its `exp`; for an introspected one, at most the cache TTL). */
  goodUntilMs: number;
}

export type Verification =
  | { outcome: 'verified'; token: VerifiedToken }
  | { outcome: 'invalid' }
  /** The issuer cannot be asked now (an unseen kid, introspection away): neither valid nor invalid. */
  | { outcome: 'unavailable'; retryAfterS: number };

const INVALID: Verification = { outcome: 'invalid' };

/** RFC 9068 section 2.1: `at+jwt`, or its full media type; a token without `typ` is taken (the issuer sets none). */
const isAccessTokenType = (typ: string | undefined) =>
  typ === undefined || ['at+jwt', 'application/at+jwt'].includes(typ.toLowerCase());

/** The scopes a token grants: RFC 9068's space-separated `scope`, or an `scp` list (Entra ID, Okta). */
function scopesOf(claims: Record<string, unknown>): string[] {
  if (typeof claims.scope === 'string') return claims.scope.split(' ').filter(Boolean);
  if (Array.isArray(claims.scp)) return claims.scp.filter((s): s is string => typeof s === 'string');
  if (typeof claims.scp === 'string') return claims.scp.split(' ').filter(Boolean);
  return [];
}

const audiences = (aud: unknown): unknown[] => (Array.isArray(aud) ? aud : [aud]);

/**
 * Verifies an access token against the configured issuers, with jose (no signature check of our own): a JWT
 * (three segments) by its `iss`'s keys (RFC 9068: alg from the issuer's allow-list, iss, aud, exp, nbf and iat with
 * the issuer's clock skew, typ), anything else by RFC 7662 introspection at the issuers that have it. It caches
 * nothing itself (TokenCache does).
 */
export class TokenVerifier {
  private readonly byIssuer = new Map<string, IssuerKeys>();
  private readonly introspecting: IssuerKeys[];
  /** Introspection requests in flight, by issuer: at most its introspectionConcurrency. */
  private readonly inFlight = new Map<string, number>();

  constructor(
    issuers: readonly IssuerKeys[],
    private readonly now: () => number,
  ) {
    for (const keys of issuers) this.byIssuer.set(keys.config.issuer, keys);
    this.introspecting = issuers.filter((keys) => keys.config.introspection !== undefined);
  }

  verify(token: string): Promise<Verification> {
    return token.split('.').length === 3 ? this.verifyJwt(token) : this.introspect(token);
  }

  private async verifyJwt(token: string): Promise<Verification> {
    let iss: unknown;
    let typ: unknown;
    try {
      iss = decodeJwt(token).iss;
      typ = decodeProtectedHeader(token).typ;
    } catch {
      return INVALID;
    }
    const keys = typeof iss === 'string' ? this.byIssuer.get(iss) : undefined;
    if (!keys || (typ !== undefined && (typeof typ !== 'string' || !isAccessTokenType(typ)))) return INVALID;
    const { config } = keys;
    let payload: JWTPayload;
    const now = this.now();
    try {
      ({ payload } = await jwtVerify(token, keys.keyFor, {
        issuer: config.issuer,
        audience: config.audience,
        algorithms: [...config.algorithms],
        clockTolerance: config.clockSkewS,
        requiredClaims: ['exp'],
        currentDate: new Date(now),
      }));
    } catch (error) {
      if (error instanceof IssuerUnreachable) return { outcome: 'unavailable', retryAfterS: error.retryAfterS };
      return INVALID;
    }
    // jose checks a future iat only with maxTokenAge: a token issued later than now (beyond the skew) is refused.
    if (typeof payload.iat === 'number' && payload.iat * 1000 > now + config.clockSkewS * 1000) return INVALID;
    const clientId = payload[config.clientIdClaim];
    if (typeof clientId !== 'string' || clientId === '') return INVALID;
    return {
      outcome: 'verified',
      token: { issuer: config, clientId, scopes: scopesOf(payload), goodUntilMs: payload.exp! * 1000 },
    };
  }

  /** RFC 7662 at each issuer that has introspection, in OAUTH_ISSUERS order: the first to call it active wins. */
  private async introspect(token: string): Promise<Verification> {
    let unavailable: Verification | undefined;
    for (const keys of this.introspecting) {
      try {
        const answer = await this.introspectAt(keys, token);
        if (answer) return answer;
      } catch (error) {
        unavailable ??= {
          outcome: 'unavailable',
          retryAfterS: error instanceof IssuerUnreachable ? error.retryAfterS : 1,
        };
      }
    }
    return unavailable ?? INVALID;
  }

  /**
   * The verified token, or undefined when this issuer does not call it active (or it is not for this API). Beyond
   * the issuer's introspectionConcurrency, IssuerUnreachable at once (503, Retry-After 1): distinct unknown opaque
   * tokens, junk or not, never queue up more requests to the issuer than that.
   */
  private async introspectAt(keys: IssuerKeys, token: string): Promise<Verification | undefined> {
    const { config } = keys;
    const busy = this.inFlight.get(config.issuer) ?? 0;
    if (busy >= config.introspectionConcurrency)
      throw new IssuerUnreachable(config.issuer, 1, `${busy} introspections in flight already`);
    this.inFlight.set(config.issuer, busy + 1);
    try {
      return await this.askIssuer(keys, token);
    } finally {
      this.inFlight.set(config.issuer, (this.inFlight.get(config.issuer) ?? 1) - 1);
    }
  }

  private async askIssuer(keys: IssuerKeys, token: string): Promise<Verification | undefined> {
    const { config } = keys;
    const endpoint = await keys.introspectionEndpoint();
    if (!endpoint) throw new IssuerUnreachable(config.issuer, 5, 'its metadata names no introspection_endpoint');
    const { clientId, clientSecret } = config.introspection!;
    // client_secret_basic (RFC 6749 section 2.3.1): each part form-encoded, then Basic.
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
    const claims = (await issuerJson(endpoint, config.timeoutMs, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
    })) as Record<string, unknown>;
    if (claims.active !== true) return undefined;
    const now = this.now();
    const skewMs = config.clockSkewS * 1000;
    if (claims.iss !== undefined && claims.iss !== config.issuer) return undefined;
    if (claims.aud !== undefined && !audiences(claims.aud).includes(config.audience)) return undefined;
    if (typeof claims.exp === 'number' && claims.exp * 1000 + skewMs <= now) return undefined;
    if (typeof claims.nbf === 'number' && claims.nbf * 1000 - skewMs > now) return undefined;
    const client = claims[config.clientIdClaim];
    if (typeof client !== 'string' || client === '') return undefined;
    const ttlEnd = now + config.introspectionCacheMs;
    return {
      outcome: 'verified',
      token: {
        issuer: config,
        clientId: client,
        scopes: scopesOf(claims),
        goodUntilMs: typeof claims.exp === 'number' ? Math.min(claims.exp * 1000, ttlEnd) : ttlEnd,
      },
    };
  }
}
