import { withoutStandInWarnings } from './stand-in-warnings';
import { randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

/** The configuration `npm start`'s and compose's identity provider runs with (scripts/identity-provider.js): one source. */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the script is CommonJS, read as it is
const { providerConfiguration } = require('../../scripts/identity-provider') as {
  providerConfiguration(options: {
    issuer: string;
    audience: string;
    scopes: string[];
    clients: Array<IdentityProviderClient & { tokenFormat?: 'jwt' | 'opaque'; grantTypes?: string[] }>;
    signingKeys: JWK[];
  }): Record<string, unknown>;
};

/** The API's audience (resource indicator) the provider issues tokens for. */
export const API_AUDIENCE = 'https://api.petstore.test';
export const SCOPES = ['pets:read', 'pets:write'] as const;

/** A signing key of the provider, private part included, so that a test can craft tokens the issuer's key signed. */
export interface SigningKey {
  kid: string;
  privateJwk: JWK;
  alg: 'ES256';
}

export interface IdentityProviderClient {
  clientId: string;
  clientSecret: string;
}

async function newSigningKey(): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = `k-${randomBytes(6).toString('hex')}`;
  return { kid, alg: 'ES256', privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' } };
}

/**
 * A real OAuth 2.0 authorization server for the tests (oidc-provider 9, in this process, on a loopback port, configured
 * as scripts/identity-provider.js configures npm start's and compose's): the client-credentials grant with JWT access tokens (RFC 9068, `at+jwt`, ES256) for API_AUDIENCE, a client whose
 * tokens are opaque (for introspection), a client the gateway introspects with, introspection and revocation.
 * `rotateKeys` restarts it on the same port with a new signing key first and the old ones kept in its JWKS (how
 * oidc-provider rotates: the first key of an algorithm signs); `stop` takes it away (its port refuses).
 */
export class IdentityProvider {
  readonly jwtClient: IdentityProviderClient = {
    clientId: 'machine-jwt',
    clientSecret: randomBytes(24).toString('hex'),
  };
  readonly opaqueClient: IdentityProviderClient = {
    clientId: 'machine-opaque',
    clientSecret: randomBytes(24).toString('hex'),
  };
  /** The gateway's own client, for introspection. */
  readonly gatewayClient: IdentityProviderClient = {
    clientId: 'gateway',
    clientSecret: randomBytes(24).toString('hex'),
  };
  private server?: Server;
  private keys: SigningKey[] = [];

  private constructor(private port: number) {}

  static async start(): Promise<IdentityProvider> {
    const idp = new IdentityProvider(0);
    idp.keys = [await newSigningKey()];
    await idp.listen();
    return idp;
  }

  get issuer(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The key new tokens are signed with. */
  get signingKey(): SigningKey {
    return this.keys[0];
  }

  /** A client-credentials access token of `client` for the API (JWT or opaque, as the client is configured). */
  async token(client: IdentityProviderClient = this.jwtClient, scope: string = SCOPES.join(' ')): Promise<string> {
    const response = await fetch(`${this.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: API_AUDIENCE, scope }).toString(),
    });
    const body = (await response.json()) as { access_token?: string };
    if (response.status !== 200 || !body.access_token)
      throw new Error(`token: ${response.status} ${JSON.stringify(body)}`);
    return body.access_token;
  }

  /** RFC 7009 revocation by the token's own client. */
  async revoke(token: string, client: IdentityProviderClient = this.opaqueClient): Promise<void> {
    const response = await fetch(`${this.issuer}/token/revocation`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
    });
    if (response.status !== 200) throw new Error(`revoke: ${response.status} ${await response.text()}`);
  }

  /** A new signing key; the old ones stay in the JWKS, so their tokens verify until they expire. */
  async rotateKeys(): Promise<SigningKey> {
    this.keys = [await newSigningKey(), ...this.keys];
    await this.stop();
    await this.listen();
    return this.signingKey;
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
    const handle = this.provider().callback();
    // No kept-alive connection outlives a restart (a client's pooled socket would fail its next request).
    server.on('request', (request, response) => {
      response.setHeader('connection', 'close');
      void handle(request, response);
    });
    this.server = server;
  }

  private provider(): Provider {
    return withoutStandInWarnings(() => this.build());
  }

  private build(): Provider {
    return new Provider(
      this.issuer,
      providerConfiguration({
        issuer: this.issuer,
        audience: API_AUDIENCE,
        scopes: [...SCOPES],
        clients: [
          this.jwtClient,
          { ...this.opaqueClient, tokenFormat: 'opaque' },
          { ...this.gatewayClient, grantTypes: [] },
        ],
        signingKeys: this.keys.map((key) => key.privateJwk),
      }),
    );
  }
}
