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
 * and signs the demo people (DEMO_PEOPLE, issue #51) in to the console and the portal, each client served only when
 * its secret is given:
 *   IDP_CONSOLE_CLIENT_ID (petstore-console), IDP_CONSOLE_CLIENT_SECRET, IDP_CONSOLE_URLS (comma-separated: the
 *   console's addresses, each giving a redirect URI <url>/sign-in/oidc/callback and a post-logout one
 *   <url>/sign-in?out=1); IDP_PORTAL_CLIENT_ID (petstore-portal), IDP_PORTAL_CLIENT_SECRET,
 *   IDP_PORTAL_REDIRECT_URIS (comma-separated: <portal>/login/oidc/<id>/callback).
 * Their login is oidc-provider's development form (devInteractions): any login of DEMO_PEOPLE, any password. A
 * stand-in, never a provider for real people.
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
/** The scopes a sign-in client asks for, and the ID token claims each one brings. */
const SIGN_IN_CLAIMS = { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] };

/**
 * The demo company's people (issue #51; the tests sign in as them too, test/support/identity-provider-people.ts):
 * `login` is what is typed in the login form and the ID token's `sub`.
 * @type {ReadonlyArray<{ login: string, email: string, emailVerified: boolean, groups: string[], role: string }>}
 */
const DEMO_PEOPLE = [
  {
    login: 'olivia',
    email: 'olivia.ops@example.com',
    emailVerified: true,
    groups: ['ops-admins'],
    role: 'console: every scope',
  },
  {
    login: 'sam',
    email: 'sam.support@example.com',
    emailVerified: true,
    groups: ['support'],
    role: 'console: read-only',
  },
  {
    login: 'nora',
    email: 'nora.nobody@example.com',
    emailVerified: true,
    groups: ['marketing'],
    role: 'console: no role, refused',
  },
  {
    login: 'dev',
    email: 'dev@company.example',
    emailVerified: true,
    groups: ['developers'],
    role: 'portal: a company developer',
  },
  {
    login: 'unverified',
    email: 'unverified@example.com',
    emailVerified: false,
    groups: ['developers'],
    role: 'portal: email not verified, refused',
  },
];

/** The gateway's mapping of these people's groups to admin scopes (ADMIN_OIDC_ROLES, docs/sso.md). */
const DEMO_ROLES = {
  'ops-admins': { scopes: 'all' },
  support: { scopes: ['consumers:read', 'usage:read', 'audit:read'] },
};

/** The email domain of the demo company's developers: the portal requires them to sign in with this provider. */
const DEMO_DEVELOPER_DOMAIN = 'company.example';

/**
 * A person as an account of the provider: what the ID token says of them.
 * @param {{ login: string, email: string, emailVerified: boolean, groups: string[] }} person
 * @returns {ProviderAccount}
 */
function personAccount(person) {
  return {
    accountId: person.login,
    claims: { email: person.email, email_verified: person.emailVerified, groups: person.groups },
  };
}

/**
 * A client that signs people in (the console's, the portal's): authorization code with PKCE, a secret.
 * @param {{ clientId: string, clientSecret: string, redirectUris: string[], postLogoutRedirectUris?: string[] }} client
 * @returns {ProviderClient}
 */
function signInClient(client) {
  return {
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    grantTypes: ['authorization_code'],
    metadata: {
      response_types: ['code'],
      redirect_uris: client.redirectUris,
      post_logout_redirect_uris: client.postLogoutRedirectUris ?? [],
      scope: Object.keys(SIGN_IN_CLAIMS).join(' '),
    },
  };
}

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
  // Access tokens for the API only for the machines' clients: a sign-in's are for userinfo.
  const apiClients = new Set(
    clients
      .filter((c) => (c.grantTypes ?? ['client_credentials']).includes('client_credentials'))
      .map((c) => c.clientId),
  );
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
    scopes: [...scopes, ...Object.keys(SIGN_IN_CLAIMS).filter((scope) => scope !== 'openid')],
    claims: SIGN_IN_CLAIMS,
    // The ID token carries the claims (a code flow's would otherwise be at userinfo only).
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    ttl: {
      ClientCredentials: options.accessTokenTtlS ?? ACCESS_TOKEN_TTL_S,
      AccessToken: 600,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    // A browser page of these origins (Swagger UI) may call the token endpoint with a client's secret.
    clientBasedCORS: (_ctx, origin) => corsOrigins.includes(origin),
    findAccount: (_ctx, id) => {
      const account = accounts.get(id);
      return account && { accountId: id, claims: () => ({ sub: id, ...account.claims }) };
    },
    // First-party clients (the console, the portal): no consent screen, the OpenID scopes asked for are granted.
    loadExistingGrant: async (ctx) => {
      const { provider, session, client, params } = ctx.oidc;
      const grant = new provider.Grant({ accountId: session.accountId, clientId: client.clientId });
      grant.addOIDCScope(String(params.scope ?? 'openid'));
      await grant.save();
      return grant;
    },
    features: {
      // People sign in with oidc-provider's development login form (any password): a stand-in's login.
      devInteractions: { enabled: accounts.size > 0 },
      rpInitiatedLogout: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, client) => (client && apiClients.has(client.clientId) ? audience : undefined),
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

/** A comma-separated list of the environment. */
const listOf = (value) =>
  (value || '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/** The console's and the portal's sign-in clients the environment gives (above): each needs its secret. */
function signInClientsOf(env) {
  const clients = [];
  if (env.IDP_CONSOLE_CLIENT_SECRET) {
    const urls = listOf(env.IDP_CONSOLE_URLS).map((url) => url.replace(/\/+$/, ''));
    clients.push(
      signInClient({
        clientId: env.IDP_CONSOLE_CLIENT_ID || 'petstore-console',
        clientSecret: env.IDP_CONSOLE_CLIENT_SECRET,
        redirectUris: urls.map((url) => `${url}/sign-in/oidc/callback`),
        postLogoutRedirectUris: urls.map((url) => `${url}/sign-in?out=1`),
      }),
    );
  }
  if (env.IDP_PORTAL_CLIENT_SECRET)
    clients.push(
      signInClient({
        clientId: env.IDP_PORTAL_CLIENT_ID || 'petstore-portal',
        clientSecret: env.IDP_PORTAL_CLIENT_SECRET,
        redirectUris: listOf(env.IDP_PORTAL_REDIRECT_URIS),
      }),
    );
  return clients;
}

/** The program: one demo client, from the environment (above), and the people's sign-in clients. */
async function main() {
  const env = process.env;
  const port = Number(env.IDP_PORT || DEFAULT_PORT);
  const clientSecret = env.IDP_CLIENT_SECRET;
  if (!clientSecret) {
    console.error('identity provider: set IDP_CLIENT_SECRET (the demo client secret), e.g. $(openssl rand -hex 24)');
    process.exit(2);
  }
  const clientId = env.IDP_CLIENT_ID || 'demo-client';
  const signInClients = signInClientsOf(env);
  const provider = await startIdentityProvider({
    issuer: env.IDP_ISSUER || `http://127.0.0.1:${port}`,
    host: env.IDP_HOST || '127.0.0.1',
    port,
    audience: env.IDP_AUDIENCE || DEFAULT_AUDIENCE,
    clients: [{ clientId, clientSecret }, ...signInClients],
    accounts: DEMO_PEOPLE.map(personAccount),
    corsOrigins: listOf(env.IDP_CORS_ORIGINS),
  });
  const signIn = signInClients.map((c) => c.clientId).join(', ');
  console.log(
    `identity provider ${provider.issuer} (token endpoint ${provider.tokenUrl}, client ${clientId}` +
      `${signIn ? `; people sign in to ${signIn}` : ''})`,
  );
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
  DEMO_PEOPLE,
  DEMO_ROLES,
  DEMO_DEVELOPER_DOMAIN,
  personAccount,
  signInClient,
  newSigningKey,
  providerConfiguration,
  startIdentityProvider,
};
