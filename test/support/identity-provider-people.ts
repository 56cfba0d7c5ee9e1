import { withoutStandInWarnings } from './stand-in-warnings';
import { randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, importJWK, type JWK } from 'jose';
import Provider from 'oidc-provider';

/** A person of the demo company: who signs in, and what the ID token says of them. */
export interface DemoPerson {
  /** What is typed in the provider's login form, and the ID token's `sub`. */
  login: string;
  email: string;
  emailVerified: boolean;
  groups: string[];
}

/** The demo people and their roles: npm start's and compose's provider has the same (scripts/identity-provider.js). */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the script is CommonJS, read as it is
const demo = require('../../scripts/identity-provider') as {
  DEMO_PEOPLE: readonly DemoPerson[];
  DEMO_ROLES: Record<string, { scopes: 'all' | string[] }>;
  personAccount(person: DemoPerson): { accountId: string; claims: Record<string, unknown> };
};

/**
 * The demo people in two roles (issue #51): an operator in `ops-admins`, a support person in `support` (read-only),
 * and one in no role the gateway maps; a developer for the portal with a verified email, one without.
 */
export const DEMO_PEOPLE: readonly DemoPerson[] = demo.DEMO_PEOPLE;

/** The mapping of these people's groups the tests configure the gateway with (ADMIN_OIDC_ROLES). */
export const DEMO_ROLES = demo.DEMO_ROLES;

/** A client of the provider that signs people in (authorization code flow). */
export interface SignInClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
}

/**
 * A real OpenID provider (oidc-provider 9, in this process, on a loopback port) for the people who sign in to the
 * console and the portal: the authorization code flow with PKCE, an interactive login (oidc-provider's development
 * login form: the person's `login`; the password is not checked, these are demo people), no consent screen (the
 * clients are first-party), ID tokens carrying `email`, `email_verified` and `groups`, RP-initiated logout.
 * Clients are registered once their redirect URIs are known (`register`, before any flow); `stop` takes it away
 * (its port refuses), `start` again brings it back on the same port. Beside `IdentityProvider` (identity-provider.ts,
 * the machines' client credentials), not part of it.
 */
export class PeopleIdentityProvider {
  private server?: Server;
  private provider?: Provider;
  private readonly clients = new Map<string, SignInClient>();
  private signingJwk?: JWK;

  private constructor(
    private port: number,
    readonly people: readonly DemoPerson[],
  ) {}

  static async start(people: readonly DemoPerson[] = DEMO_PEOPLE): Promise<PeopleIdentityProvider> {
    const idp = new PeopleIdentityProvider(0, people);
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    idp.signingJwk = { ...(await exportJWK(privateKey)), kid: `p-${randomBytes(6).toString('hex')}`, alg: 'ES256' };
    await idp.listen();
    return idp;
  }

  get issuer(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Registers (or replaces) a client; the provider is rebuilt with it (its sessions and codes are kept in memory). */
  register(client: Omit<SignInClient, 'clientSecret'> & { clientSecret?: string }): SignInClient {
    const full = { ...client, clientSecret: client.clientSecret ?? randomBytes(24).toString('hex') };
    this.clients.set(client.clientId, full);
    this.provider = undefined;
    return full;
  }

  /**
   * An ID token this provider's key signed, with claims of the test's choosing (a foreign audience, an old `iat`):
   * what a provider would have issued to another client, or a token stolen earlier.
   */
  async craftIdToken(claims: Record<string, unknown>): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const key = await importJWK(this.signingJwk!, 'ES256');
    return new SignJWT({ iat: now, exp: now + 600, iss: this.issuer, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: this.signingJwk!.kid, typ: 'JWT' })
      .sign(key);
  }

  /** Back on the same port after `stop` (a provider that was away). */
  async start(): Promise<void> {
    if (!this.server) await this.listen();
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async listen(): Promise<void> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    server.on('request', (request, response) => {
      response.setHeader('connection', 'close');
      this.provider ??= this.build();
      void this.provider.callback()(request, response);
    });
    this.server = server;
  }

  private build(): Provider {
    const accounts = new Map(this.people.map((person) => [person.login, demo.personAccount(person)]));
    return withoutStandInWarnings(
      () =>
        new Provider(this.issuer, {
          clients: [...this.clients.values()].map((c) => ({
            client_id: c.clientId,
            client_secret: c.clientSecret,
            redirect_uris: c.redirectUris,
            post_logout_redirect_uris: c.postLogoutRedirectUris,
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
            id_token_signed_response_alg: 'ES256',
          })),
          jwks: { keys: [this.signingJwk] },
          scopes: ['openid', 'email', 'groups'],
          claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
          // The ID token carries the claims (a code flow's would otherwise be at userinfo only).
          conformIdTokenClaims: false,
          pkce: { required: () => true },
          features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
          findAccount: (_ctx: unknown, sub: string) => {
            const account = accounts.get(sub);
            return account && { accountId: sub, claims: () => ({ sub, ...account.claims }) };
          },
          // First-party clients: no consent screen, every scope asked for is granted.
          loadExistingGrant: async (ctx: ProviderContext) => {
            const { provider, session, client, params } = ctx.oidc;
            const grant = new provider.Grant({ accountId: session.accountId, clientId: client.clientId });
            grant.addOIDCScope(String(params.scope ?? 'openid'));
            await grant.save();
            return grant;
          },
          ttl: { IdToken: 3600, AccessToken: 600, AuthorizationCode: 60, Session: 3600, Interaction: 600, Grant: 3600 },
        }),
    );
  }
}

/** The part of oidc-provider's context the grant loader reads. */
interface ProviderContext {
  oidc: {
    provider: {
      Grant: new (init: { accountId: string; clientId: string }) => {
        addOIDCScope(scope: string): void;
        save(): Promise<string>;
      };
    };
    session: { accountId: string };
    client: { clientId: string };
    params: Record<string, unknown>;
  };
}
