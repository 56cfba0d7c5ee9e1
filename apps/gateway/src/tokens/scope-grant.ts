import type { OAuthIssuerConfig } from '../config/oauth.config';

/**
 * What a token's scopes let it call, under its issuer's scope → operations mapping (docs/oauth.md): the operations
 * allowed, and for one refused the scopes that would allow it (the `scope` of RFC 6750's insufficient_scope).
 */
export class ScopeGrant {
  constructor(
    private readonly allowed: ReadonlySet<string>,
    private readonly mapping: ReadonlyMap<string, readonly string[]>,
  ) {}

  /** undefined: the issuer maps no scopes, and its tokens may call every operation (the plan decides the limits). */
  static of(issuer: OAuthIssuerConfig, scopes: readonly string[]): ScopeGrant | undefined {
    if (!issuer.scopes) return undefined;
    const allowed = new Set<string>();
    for (const scope of scopes) for (const operation of issuer.scopes.get(scope) ?? []) allowed.add(operation);
    return new ScopeGrant(allowed, issuer.scopes);
  }

  allows(operation: string | undefined): boolean {
    return operation !== undefined && this.allowed.has(operation);
  }

  /** The scopes any one of which allows `operation`. */
  scopesFor(operation: string | undefined): string[] {
    return [...this.mapping].filter(([, operations]) => operations.includes(operation ?? '')).map(([scope]) => scope);
  }
}
