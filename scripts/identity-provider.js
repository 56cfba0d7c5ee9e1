#!/usr/bin/env node
/**
 * A stand-in for a customer's identity provider (issue #50, docs/oauth.md): oidc-provider, a certified OpenID
 * provider library, issuing client-credentials access tokens as RFC 9068 JWTs (`at+jwt`, ES256) for the API's
 * audience, with introspection and revocation. For integration environments only: its clients, accounts and
 * signing keys live in memory (a restart signs with a new key; the gateway picks it up with the first new token).
 *
 * Run as a program (`npm start` with START_IDENTITY_PROVIDER=1, and docker compose's `idp` profile), it serves one
 * demo client, configured by the environment:
 *   IDP_HOST (127.0.0.1), IDP_PORT (3005), IDP_ISSUER (http://127.0.0.1:IDP_PORT: the `iss` of its tokens, the URL
 *   the gateway finds its keys at), IDP_AUDIENCE (https://api.petstore.example.com: the gateway's OAUTH_ISSUERS
 *   audience), IDP_CLIENT_ID (demo-client), IDP_CLIENT_SECRET (required), IDP_CORS_ORIGINS (comma-separated: the
 *   origins whose pages may ask for a token, Swagger UI's).
 *
 * Used as a module (the tests, and whoever adds people or clients later: the console's and portal's sign-in, issue
 * #51), `startIdentityProvider(options)` takes clients, accounts and a last word on the configuration
 * (`configure`), and `providerConfiguration(options)` gives the configuration alone: neither needs this file edited.
 */
const { randomBytes } = require('node:crypto');
const { createServer } = require('node:http');

/** The scopes the demo API knows (gateway/: its OAUTH_ISSUERS `scopes` may map them to operations). */
const SCOPES = ['pets:read', 'pets:write'];
const DEFAULT_AUDIENCE = 'https://api.petstore.example.com';
const DEFAULT_PORT = 3005;
const ACCESS_TOKEN_TTL_S = 600;

/**
 * @typedef {object} ProviderClient
 * @property {string} clientId
 * @property {string} clientSecret
 * @property {'jwt' | 'opaque'} [tokenFormat] its access tokens: JWTs (default) or opaque ones (for introspection)
 * @property {string[]} [grantTypes] default client_credentials; [] for a client that only introspects
 * @property {Record<string, unknown>} [metadata] any other client metadata (redirect_uris, response_types…)
 *
 * @typedef {object} ProviderAccount  someone who may sign in (an authorization-code client's user)
 * @property {string} accountId the `sub`
 * @property {Record<string, unknown>} [claims] e.g. { email, name }
 *
 * @typedef {object} ProviderOptions
 * @property {string} issuer
 * @property {string} [audience] the resource (API) its access tokens are for
 * @property {string[]} [scopes]
 * @property {ProviderClient[]} [clients]
 * @property {ProviderAccount[]} [accounts]
 * @property {object[]} [signingKeys] private JWKs, the first signs (the others stay in the JWKS); default one new ES256
 * @property {string[]} [corsOrigins] origins whose pages may call the token endpoint (a browser's client-credentials grant)
 * @property {number} [accessTokenTtlS]
 * @property {(configuration: Record<string, any>) => Record<string, any>} [configure] the last word on the configuration
 */

/** A new ES256 signing key, private JWK (with its kid). */
async function newSigningKey() {
  const { exportJWK, generateKeyPair } = require('jose');
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = `k-${randomBytes(6).toString('hex')}`;
  return { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' };
}

/**
 * The oidc-provider configuration of `options` (signingKeys required here).
 * @param {ProviderOptions & { signingKeys: object[] }} options
 */
function providerConfiguration(options) {
  const audience = options.audience ?? DEFAULT_AUDIENCE;
  const scopes = options.scopes ?? SCOPES;
  const clients = options.clients ?? [];
  const accounts = new Map((options.accounts ?? []).map((account) => [account.accountId, account]));
  const corsOrigins = options.corsOrigins ?? [];
  const opaque = new Set(clients.filter((c) => c.tokenFormat === 'opaque').map((c) => c.clientId));
  const configuration = {
    clients: clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      grant_types: c.grantTypes ?? ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: scopes.join(' '),
      ...c.metadata,
    })),
    jwks: { keys: options.signingKeys },
    scopes,
    ttl: { ClientCredentials: options.accessTokenTtlS ?? ACCESS_TOKEN_TTL_S },
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    // A browser page of these origins (Swagger UI) may call the token endpoint with a client's secret.
    clientBasedCORS: (_ctx, origin) => corsOrigins.includes(origin),
    findAccount: (_ctx, id) => {
      const account = accounts.get(id);
      return account && { accountId: id, claims: () => ({ sub: id, ...account.claims }) };
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource, client) => {
          if (resource !== audience) throw new Error(`unknown resource ${resource}`);
          const isOpaque = opaque.has(client.clientId);
          return {
            scope: scopes.join(' '),
            audience,
            accessTokenTTL: options.accessTokenTtlS ?? ACCESS_TOKEN_TTL_S,
            accessTokenFormat: isOpaque ? 'opaque' : 'jwt',
            ...(isOpaque ? {} : { jwt: { sign: { alg: 'ES256' } } }),
          };
        },
      },
    },
  };
  return options.configure ? options.configure(configuration) : configuration;
}

/**
 * The provider of `options`, listening on `host`:`port` (0: a free one; `issuer` may then be a function of it).
 * Resolves once it listens, to its issuer, its token endpoint and close().
 * @param {Omit<ProviderOptions, 'issuer'> & { issuer: string | ((port: number) => string), host?: string, port?: number }} options
 */
async function startIdentityProvider(options) {
  const { default: Provider } = require('oidc-provider');
  const signingKeys = options.signingKeys ?? [await newSigningKey()];
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve(undefined));
  });
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  const issuer = typeof options.issuer === 'function' ? options.issuer(port) : options.issuer;
  const provider = new Provider(issuer, providerConfiguration({ ...options, issuer, signingKeys }));
  const handle = provider.callback();
  server.on('request', (request, response) => void handle(request, response));
  return {
    issuer,
    port,
    tokenUrl: `${issuer}/token`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}

/** The program: one demo client, from the environment (above). */
async function main() {
  const env = process.env;
  const port = Number(env.IDP_PORT || DEFAULT_PORT);
  const clientSecret = env.IDP_CLIENT_SECRET;
  if (!clientSecret) {
    console.error('identity provider: set IDP_CLIENT_SECRET (the demo client secret), e.g. $(openssl rand -hex 24)');
    process.exit(2);
  }
  const clientId = env.IDP_CLIENT_ID || 'demo-client';
  const provider = await startIdentityProvider({
    issuer: env.IDP_ISSUER || `http://127.0.0.1:${port}`,
    host: env.IDP_HOST || '127.0.0.1',
    port,
    audience: env.IDP_AUDIENCE || DEFAULT_AUDIENCE,
    clients: [{ clientId, clientSecret }],
    corsOrigins: (env.IDP_CORS_ORIGINS || '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
  });
  console.log(`identity provider ${provider.issuer} (token endpoint ${provider.tokenUrl}, client ${clientId})`);
  const stop = () => provider.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(`identity provider: ${error.message}`);
    process.exit(1);
  });
}

module.exports = {
  SCOPES,
  DEFAULT_AUDIENCE,
  DEFAULT_PORT,
  newSigningKey,
  providerConfiguration,
  startIdentityProvider,
};
