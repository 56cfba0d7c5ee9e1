import { ApiError } from '@app/errors';
import { recordEdgeOutcome } from '@app/platform/tracing/edge-outcome';
import { Injectable } from '@nestjs/common';
import { hashApiKey, isWellFormedApiKey } from '../consumers/api-key';
import { KeyCache } from '../keys/key-cache';
import type { AddressRestriction } from '../consumers/allowed-addresses';
import type { Consumer } from '../consumers/consumer';
import type { ScopeGrant } from '../tokens/scope-grant';
import { TokenCache } from '../tokens/token-cache';

const REALM = 'Bearer realm="petstore"';

/** Prefix of our keys: a bearer that starts with it is judged as a key, never as an access token. */
const KEY_PREFIX = 'petk_';

/** RFC 6750's invalid_token, one message whatever check failed (issuer, audience, signature, expiry, binding). */
const INVALID_TOKEN = 'Invalid or expired access token.';

/**
 * Who a request's Authorization header names: the consumer and the credential's id (a key's, or a client binding's
 * for an access token), with what the token's scopes allow (`grant`; absent: everything), or the refusal to answer
 * with; or, `unchecked`, a credential that cannot be checked right now (the key store or the token's issuer away, or
 * the lookups' queue full): neither valid nor refused, answered 503 without counting anything against the address
 * (docs/decisions.md).
 */
export type Authentication =
  | {
      outcome: 'valid';
      consumer: Consumer;
      keyId: string;
      /** Where the credential may be used from (its consumer's and its own ranges); undefined: anywhere. */
      addresses: AddressRestriction | undefined;
      grant?: ScopeGrant;
    }
  | { outcome: 'refused'; refusal: ApiError }
  | { outcome: 'unchecked'; refusal: ApiError };

/**
 * The 403 of a valid credential used from an address its consumer, key or client binding does not allow (issue #50,
 * point 5). It names the address the gateway judged (by the trusted-proxy rule), so that a client behind a proxy the
 * gateway does not trust can tell why.
 */
export function addressNotAllowed(address: string | undefined): ApiError {
  return new ApiError('ADDRESS_NOT_ALLOWED', addressNotAllowedMessage(address ?? 'an unknown address'));
}

export const addressNotAllowedMessage = (address: string): string =>
  `This API key or access token may not be used from ${address}: ask the API operators to allow it.`;

/**
 * The 403 of a token whose scopes do not allow `operation` (RFC 6750 insufficient_scope, naming the scopes that
 * would), or undefined when they do (or the credential is a key, or its issuer maps no scopes).
 */
export function insufficientScope(grant: ScopeGrant | undefined, operation: string | undefined): ApiError | undefined {
  if (!grant || grant.allows(operation)) return undefined;
  const scopes = grant.scopesFor(operation).join(' ');
  return new ApiError(
    'INSUFFICIENT_SCOPE',
    `The access token's scopes do not allow this operation: it needs ${scopes ? `one of: ${scopes}` : 'a scope no token is given'}.`,
    {
      'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${scopes}"`,
    },
  );
}

/**
 * The bearer credential of a /v1 request: one of our API keys, or an OAuth access token of a configured issuer
 * (TokenCache, docs/oauth.md) when it is not shaped as a key. A key not in the KeyCache's filter of valid keys is refused without a
 * query (but for its ~1 % false positives, capped per second), so a flood of random well-formed keys costs no
 * database work; KEY_LOOKUPS_PER_SECOND bounds the queries of the rest. It decides nothing about limits: the
 * pipeline counts a refused request against its address, so guessing keys is throttled and ends in a ban (an
 * unchecked one, which tells a guesser nothing, is not counted).
 */
@Injectable()
export class ApiKeyAuthenticator {
  constructor(
    private readonly keys: KeyCache,
    private readonly tokens: TokenCache,
  ) {}

  async authenticate(header: string | undefined): Promise<Authentication> {
    const match = header === undefined ? undefined : /^Bearer +([^\s]+) *$/i.exec(header);
    if (match && this.tokens.enabled && !match[1].startsWith(KEY_PREFIX)) return this.authenticateToken(match[1]);
    let refusal = 'Invalid or revoked API key.';
    if (match && isWellFormedApiKey(match[1])) {
      const result = await this.keys.authenticate(hashApiKey(match[1]));
      if (result.outcome === 'valid') {
        recordEdgeOutcome({ consumer: result.consumer });
        return { outcome: 'valid', consumer: result.consumer, keyId: result.keyId, addresses: result.addresses };
      }
      if (result.outcome === 'unavailable') {
        return {
          outcome: 'unchecked',
          refusal: new ApiError('SERVICE_UNAVAILABLE', 'The API key cannot be checked right now: retry shortly.', {
            'Retry-After': String(result.retryAfterS),
          }),
        };
      }
      if (result.reason === 'expired') refusal = 'Expired API key.';
      if (result.reason === 'disabled') {
        // Its own code: the holder of a valid key of a disabled account can tell it from a revoked key, and whom to ask.
        recordEdgeOutcome({ consumer: null });
        return {
          outcome: 'refused',
          refusal: new ApiError(
            'CONSUMER_DISABLED',
            'The account this API key belongs to is disabled: contact the API operators.',
            {
              'WWW-Authenticate': `${REALM}, error="invalid_token"`,
            },
          ),
        };
      }
    }
    recordEdgeOutcome({ consumer: null });
    if (header === undefined) {
      return {
        outcome: 'refused',
        refusal: new ApiError('UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <API key>.', {
          'WWW-Authenticate': REALM,
        }),
      };
    }
    if (!match) {
      return {
        outcome: 'refused',
        refusal: new ApiError('UNAUTHORIZED', 'Malformed Authorization header: expected Bearer <API key>.', {
          'WWW-Authenticate': `${REALM}, error="invalid_request"`,
        }),
      };
    }
    return {
      outcome: 'refused',
      refusal: new ApiError('UNAUTHORIZED', refusal, { 'WWW-Authenticate': `${REALM}, error="invalid_token"` }),
    };
  }

  /** An access token: valid, refused with RFC 6750's invalid_token (or CONSUMER_DISABLED), or 503 when it cannot be checked. */
  private async authenticateToken(token: string): Promise<Authentication> {
    const result = await this.tokens.authenticate(token);
    if (result.outcome === 'valid') {
      recordEdgeOutcome({ consumer: result.consumer });
      return result;
    }
    if (result.outcome === 'unavailable') {
      return {
        outcome: 'unchecked',
        refusal: new ApiError('SERVICE_UNAVAILABLE', 'The access token cannot be checked right now: retry shortly.', {
          'Retry-After': String(result.retryAfterS),
        }),
      };
    }
    recordEdgeOutcome({ consumer: null });
    if (result.reason === 'disabled')
      return {
        outcome: 'refused',
        refusal: new ApiError(
          'CONSUMER_DISABLED',
          'The account this access token belongs to is disabled: contact the API operators.',
          { 'WWW-Authenticate': `${REALM}, error="invalid_token"` },
        ),
      };
    return {
      outcome: 'refused',
      refusal: new ApiError('UNAUTHORIZED', INVALID_TOKEN, { 'WWW-Authenticate': `${REALM}, error="invalid_token"` }),
    };
  }
}
