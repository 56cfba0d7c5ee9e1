import { ConfigurationError } from '@app/platform';
import { loadGatewayConfig } from './gateway.config';

const oauth = (issuers: unknown, extra: Record<string, string> = {}) =>
  loadGatewayConfig({ OAUTH_ISSUERS: typeof issuers === 'string' ? issuers : JSON.stringify(issuers), ...extra }).oauth;
const ISSUER = { issuer: 'https://idp.example.com/realms/acme', audience: 'https://api.petstore.example.com' };

describe('OAUTH_ISSUERS in the gateway configuration', () => {
  it('is off by default: no issuer, keys only', () => {
    expect(loadGatewayConfig({}).oauth).toEqual({ issuers: [], tokenCacheSize: 100_000 });
  });

  it('gives an issuer its stated defaults: asymmetric algorithms, client_id, 60 s of skew, a 30 s introspection TTL', () => {
    expect(oauth([ISSUER]).issuers).toEqual([
      {
        ...ISSUER,
        algorithms: ['RS256', 'ES256', 'PS256', 'EdDSA'],
        clientIdClaim: 'client_id',
        clockSkewS: 60,
        introspection: undefined,
        introspectionCacheMs: 30_000,
        introspectionConcurrency: 32,
        scopes: undefined,
        timeoutMs: 5_000,
        jwksCooldownMs: 30_000,
        jwksMaxAgeMs: 600_000,
      },
    ]);
  });

  it('reads every field an entry may set', () => {
    const [issuer] = oauth([
      {
        ...ISSUER,
        algorithms: ['ES256'],
        clientIdClaim: 'sub',
        clockSkewSeconds: 5,
        introspection: { clientId: 'gateway', clientSecret: 's3cret' },
        introspectionCacheSeconds: 10,
        introspectionConcurrency: 4,
        scopes: { 'pets:read': ['listPets', 'getPet'] },
      },
    ]).issuers;
    expect(issuer).toMatchObject({
      algorithms: ['ES256'],
      clientIdClaim: 'sub',
      clockSkewS: 5,
      introspection: { clientId: 'gateway', clientSecret: 's3cret' },
      introspectionCacheMs: 10_000,
      introspectionConcurrency: 4,
    });
    expect([...issuer.scopes!]).toEqual([['pets:read', ['listPets', 'getPet']]]);
  });

  it.each([
    ['not JSON', '[{', /OAUTH_ISSUERS: not valid JSON/],
    ['not a list', { issuer: ISSUER.issuer }, /OAUTH_ISSUERS: must be a JSON list of issuers/],
    ['no audience', [{ issuer: ISSUER.issuer }], /OAUTH_ISSUERS: \[0\]\.audience must be a non-empty string/],
    ['an issuer that is no URL', [{ ...ISSUER, issuer: 'idp' }], /\[0\]\.issuer must be an http\(s\) URL/],
    ['alg none', [{ ...ISSUER, algorithms: ['none'] }], /"none" is not allowed \(asymmetric algorithms only/],
    ['an HMAC alg', [{ ...ISSUER, algorithms: ['RS256', 'HS256'] }], /"HS256" is not allowed/],
    ['clientIdClaim', [{ ...ISSUER, clientIdClaim: 'azp' }], /\[0\]\.clientIdClaim must be client_id or sub/],
    ['skew', [{ ...ISSUER, clockSkewSeconds: 3600 }], /\[0\]\.clockSkewSeconds must be an integer from 0 to 300/],
    ['introspection', [{ ...ISSUER, introspection: { clientId: 'x' } }], /\[0\]\.introspection must be/],
    [
      'no introspection at all at once',
      [{ ...ISSUER, introspectionConcurrency: 0 }],
      /\[0\]\.introspectionConcurrency must be an integer from 1 to 1000/,
    ],
    ['unknown operation', [{ ...ISSUER, scopes: { read: ['deletePet'] } }], /unknown operation "deletePet"/],
    ['unknown field', [{ ...ISSUER, audiences: ['x'] }], /\[0\]: unknown field "audiences"/],
    ['the same issuer twice', [ISSUER, ISSUER], /issuer https:\/\/idp\.example\.com\/realms\/acme is listed twice/],
  ])('refuses %s in one line naming the entry and the field', (_name, value, message) => {
    expect(() => oauth(value)).toThrow(ConfigurationError);
    expect(() => oauth(value)).toThrow(message);
  });

  it('takes plain http outside production, and in production on loopback only', () => {
    const local = [{ ...ISSUER, issuer: 'http://idp.internal:8080' }];
    expect(oauth(local).issuers[0].issuer).toBe('http://idp.internal:8080');
    const production = { NODE_ENV: 'production', ADMIN_TOKEN: 'x8Jq2vLr9TzW4pYc7NbK3mHs6FdG1aQe5RuV0oIi' };
    expect(() => oauth(local, production)).toThrow(/\[0\]\.issuer must be an https URL in production/);
    const loopback = [{ ...ISSUER, issuer: 'http://127.0.0.1:8080' }];
    expect(oauth(loopback, production).issuers[0].issuer).toBe('http://127.0.0.1:8080');
    // An integration environment's stand-in on a private network says so, entry by entry.
    expect(oauth([{ ...local[0], insecureHttp: true }], production).issuers[0].issuer).toBe('http://idp.internal:8080');
    expect(() => oauth([{ ...local[0], insecureHttp: 'yes' }], production)).toThrow(/\[0\]\.insecureHttp must be true/);
  });
});
