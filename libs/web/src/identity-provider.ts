import * as oidc from 'openid-client';

/** The provider and a web app's client at it (the console's CONSOLE_OIDC_*, the portal's PORTAL_OIDC_PROVIDERS: docs/sso.md). */
export interface IdentityProviderSettings {
  issuer: string;
  clientId: string;
  /** Absent: a public client (PKCE only). */
  clientSecret?: string;
  /** What the button says: "Sign in with <name>". */
  name: string;
  scopes: string;
}

/** The provider could not be reached (discovery, its token endpoint): the sign-in page says so, never a 500. */
export class ProviderUnreachable extends Error {}

/** The provider or the answer it sent refused the sign-in: `reason` is a code the page and the log name. */
export class SignInRefused extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** What a sign-in must remember between the redirect to the provider and its callback (in the session). */
export interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Where the provider sends the person back: the app's callback. */
  redirectUri: string;
}

/** How long a started sign-in waits for its callback. */
export const SIGN_IN_WAIT_MS = 10 * 60_000;

/** A failure to reach the provider, told apart from an answer of its own (an error body, a token that fails a check). */
function isUnreachable(error: unknown): boolean {
  if (error instanceof oidc.ResponseBodyError || error instanceof oidc.AuthorizationResponseError) return false;
  if (
    error instanceof TypeError ||
    (error as Error)?.name === 'AbortError' ||
    (error as Error)?.name === 'TimeoutError'
  )
    return true;
  const cause = (error as { cause?: { code?: string } })?.cause;
  return typeof cause?.code === 'string' && /^(E[A-Z]+|UND_ERR)/.test(cause.code);
}

/**
 * A web app's client of an identity provider (openid-client 6; the console's and the portal's): the authorization code flow with
 * PKCE (S256), `state` and `nonce`, each generated per sign-in and kept in the visitor's session; the callback's
 * exchange checks state, the code (once, by the provider), the ID token's signature, issuer, audience and nonce.
 * The provider's metadata is discovered at each sign-in's start (a provider away at start-up does not stop the
 * app). RP-initiated logout through its end_session_endpoint.
 */
export class OidcIdentityProvider {
  private configuration?: Promise<oidc.Configuration>;

  constructor(readonly config: IdentityProviderSettings) {}

  get name(): string {
    return this.config.name;
  }

  /** Where to send the person, and what to keep until they come back. */
  async start(redirectUri: string): Promise<{ url: string; pending: PendingSignIn }> {
    // Discovered again at each sign-in: fresh metadata, and a provider that is away is a page here, not the
    // browser's own error at its address.
    this.configuration = undefined;
    const configuration = await this.discovered();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const pending: PendingSignIn = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier,
      redirectUri,
    };
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: this.config.scopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, pending };
  }

  /** The callback: the code exchanged, every check made; the ID token (the console hands it to the gateway) and its claims. */
  async finish(
    callbackUrl: URL,
    pending: PendingSignIn,
  ): Promise<{ idToken: string; subject: string; claims: oidc.IDToken }> {
    const configuration = await this.discovered();
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!tokens.id_token || !claims) throw new SignInRefused('NO_ID_TOKEN', 'The provider sent no ID token.');
      return { idToken: tokens.id_token, subject: claims.sub, claims };
    } catch (error) {
      if (error instanceof SignInRefused) throw error;
      if (isUnreachable(error)) throw new ProviderUnreachable((error as Error).message);
      if (error instanceof oidc.AuthorizationResponseError || error instanceof oidc.ResponseBodyError)
        throw new SignInRefused(
          error.error.toUpperCase().replace(/[^A-Z0-9_]/g, '_'),
          `The provider answered ${error.error}.`,
        );
      throw new SignInRefused('CHECK_FAILED', (error as Error).message);
    }
  }

  /** The provider's end-session address for this person (RP-initiated logout), or undefined when it has none or is away. */
  async endSessionUrl(idToken: string | undefined, postLogoutRedirectUri: string): Promise<string | undefined> {
    let configuration: oidc.Configuration;
    try {
      configuration = await this.discovered();
    } catch {
      return undefined;
    }
    if (!configuration.serverMetadata().end_session_endpoint) return undefined;
    return oidc.buildEndSessionUrl(configuration, {
      post_logout_redirect_uri: postLogoutRedirectUri,
      client_id: this.config.clientId,
      ...(idToken ? { id_token_hint: idToken } : {}),
    }).href;
  }

  private discovered(): Promise<oidc.Configuration> {
    this.configuration ??= this.discover().catch((error: unknown) => {
      this.configuration = undefined;
      throw new ProviderUnreachable((error as Error).message);
    });
    return this.configuration;
  }

  private discover(): Promise<oidc.Configuration> {
    const issuer = new URL(this.config.issuer);
    const auth = this.config.clientSecret ? oidc.ClientSecretBasic(this.config.clientSecret) : oidc.None();
    return oidc.discovery(issuer, this.config.clientId, undefined, auth, {
      // Plain http only where the app's configuration took it (plainHttpAllowed: loopback or insecureHttp in
      // production): openid-client refuses it otherwise, whatever the configuration said.
      ...(issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
      timeout: 5,
    });
  }
}
