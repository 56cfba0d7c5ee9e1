import { ApiError } from '@app/errors';
import { recordEdgeOutcome } from '@app/platform/tracing/edge-outcome';
import { Injectable } from '@nestjs/common';
import { hashApiKey, isWellFormedApiKey } from '../consumers/api-key';
import { KeyCache } from '../keys/key-cache';
import type { Consumer } from '../consumers/consumer';

const REALM = 'Bearer realm="petstore"';

/**
 * Who a request's Authorization header names: the consumer and the key's id, or the refusal to answer with; or,
 * `unchecked`, a key that cannot be checked right now (the key store away, or its lookups' queue full): neither
 * valid nor refused, answered 503 without counting anything against the address (docs/decisions.md).
 */
export type Authentication =
  | { outcome: 'valid'; consumer: Consumer; keyId: string }
  | { outcome: 'refused'; refusal: ApiError }
  | { outcome: 'unchecked'; refusal: ApiError };

/**
 * The bearer API key of a /v1 request. A key not in the KeyCache's filter of valid keys is refused without a
 * query (but for its ~1 % false positives, capped per second), so a flood of random well-formed keys costs no
 * database work; KEY_LOOKUPS_PER_SECOND bounds the queries of the rest. It decides nothing about limits: the
 * pipeline counts a refused request against its address, so guessing keys is throttled and ends in a ban (an
 * unchecked one, which tells a guesser nothing, is not counted).
 */
@Injectable()
export class ApiKeyAuthenticator {
  constructor(private readonly keys: KeyCache) {}

  async authenticate(header: string | undefined): Promise<Authentication> {
    const match = header === undefined ? undefined : /^Bearer +([^\s]+) *$/i.exec(header);
    let refusal = 'Invalid or revoked API key.';
    if (match && isWellFormedApiKey(match[1])) {
      const result = await this.keys.authenticate(hashApiKey(match[1]));
      if (result.outcome === 'valid') {
        recordEdgeOutcome({ consumer: result.consumer });
        return { outcome: 'valid', consumer: result.consumer, keyId: result.keyId };
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
}
