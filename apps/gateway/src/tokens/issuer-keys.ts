import { createLocalJWKSet, type JSONWebKeySet, type JWSHeaderParameters, type FlattenedJWSInput } from 'jose';
import type { OAuthIssuerConfig } from '../config/oauth.config';
import { issuerJson } from './issuer-http';

/** An issuer's discovery document or JWKS could not be fetched: a token signed with a key never seen cannot be checked. */
export class IssuerUnreachable extends Error {
  constructor(
    readonly issuer: string,
    readonly retryAfterS: number,
    reason: string,
  ) {
    super(`Issuer ${issuer} unreachable (${reason})`);
  }
}

/** What the issuer's metadata (RFC 8414 / OpenID Connect discovery) tells the gateway. */
export interface IssuerMetadata {
  jwksUri: string;
  introspectionEndpoint?: string;
}

type KeyResolver = ReturnType<typeof createLocalJWKSet>;

/**
 * The issuer's metadata URLs, tried in order: OpenID Connect discovery, then RFC 8414 (the well-known segment
 * inserted between the host and the issuer's path).
 */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  return [
    `${url.origin}${path}/.well-known/openid-configuration`,
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
  ];
}

/**
 * One issuer's signing keys, held in memory (jose's local key set over the last JWKS fetched). Verifying a token
 * whose `kid` is held never waits on the network: a JWKS older than `jwksMaxAgeMs` is refetched in the background,
 * and when that fails the held keys keep verifying (an unreachable issuer does not stop its known keys). A `kid`
 * not held triggers one refetch (shared by concurrent requests), at most once per `jwksCooldownMs`: within it, a
 * kid still unknown after a successful fetch is no key of the issuer (401), and after a failed one the issuer is
 * unreachable (IssuerUnreachable: 503, fail closed). jose's own remote set refetches on every unknown kid after a
 * failure and drops its keys once they are older than their max age, so it is not used.
 */
export class IssuerKeys {
  private metadata?: IssuerMetadata;
  private resolver?: KeyResolver;
  private kids = new Set<string | undefined>();
  /** Monotonic ms of the last fetch (attempt) and of the last successful one. */
  private attemptedAt = -Infinity;
  private fetchedAt = -Infinity;
  private failed = false;
  private pending?: Promise<void>;

  constructor(
    readonly config: OAuthIssuerConfig,
    private readonly monotonic: () => number,
    private readonly onFailure: (error: Error) => void,
  ) {}

  /** The verification key of a token's header, for jose's jwtVerify. */
  readonly keyFor = async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    const now = this.monotonic();
    if (this.resolver && this.kids.has(header.kid)) {
      if (now - this.fetchedAt > this.config.jwksMaxAgeMs && now - this.attemptedAt > this.config.jwksCooldownMs)
        this.refresh().catch(() => undefined);
      return this.resolver(header, token);
    }
    if (now - this.attemptedAt < this.config.jwksCooldownMs && !this.pending) {
      if (this.failed || !this.resolver) throw this.unreachable('fetched recently, and it failed');
      return this.resolver(header, token);
    }
    await this.refresh();
    return this.resolver!(header, token);
  };

  /** The introspection endpoint from the issuer's metadata (fetched once). */
  async introspectionEndpoint(): Promise<string | undefined> {
    if (!this.metadata) await this.refresh();
    return this.metadata?.introspectionEndpoint;
  }

  /** Fetches the metadata (once) and the JWKS; concurrent callers share one fetch. Rejects with IssuerUnreachable. */
  refresh(): Promise<void> {
    this.pending ??= this.fetchKeys().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async fetchKeys(): Promise<void> {
    this.attemptedAt = this.monotonic();
    try {
      this.metadata ??= await this.discover();
      const jwks = (await issuerJson(this.metadata.jwksUri, this.config.timeoutMs)) as JSONWebKeySet;
      if (!Array.isArray(jwks?.keys)) throw new Error(`${this.metadata.jwksUri} holds no JWKS`);
      this.resolver = createLocalJWKSet(jwks);
      this.kids = new Set(jwks.keys.map((key) => key.kid));
      this.fetchedAt = this.monotonic();
      this.failed = false;
    } catch (error) {
      this.failed = true;
      this.onFailure(error as Error);
      throw this.unreachable((error as Error).message);
    }
  }

  private async discover(): Promise<IssuerMetadata> {
    const problems: string[] = [];
    for (const url of metadataUrls(this.config.issuer)) {
      let document: Record<string, unknown>;
      try {
        document = (await issuerJson(url, this.config.timeoutMs)) as Record<string, unknown>;
      } catch (error) {
        problems.push((error as Error).message);
        continue;
      }
      // RFC 8414 section 3.3: the document must name the issuer it was fetched for.
      if (document.issuer !== this.config.issuer)
        throw new Error(`${url} names issuer ${JSON.stringify(document.issuer)}, not ${this.config.issuer}`);
      if (typeof document.jwks_uri !== 'string') throw new Error(`${url} has no jwks_uri`);
      const introspection = document.introspection_endpoint;
      return {
        jwksUri: document.jwks_uri,
        introspectionEndpoint: typeof introspection === 'string' ? introspection : undefined,
      };
    }
    throw new Error(`no metadata document: ${problems.join('; ')}`);
  }

  private unreachable(reason: string): IssuerUnreachable {
    const waitMs = this.config.jwksCooldownMs - (this.monotonic() - this.attemptedAt);
    return new IssuerUnreachable(this.config.issuer, Math.max(1, Math.ceil(waitMs / 1000)), reason);
  }
}
