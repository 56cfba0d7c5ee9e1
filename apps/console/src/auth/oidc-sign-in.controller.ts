import {
  AdminApi,
  AdminApiError,
  href,
  OidcIdentityProvider,
  PendingSignIn,
  ProviderUnreachable,
  regenerateSession,
  redirectAfterSave,
  saveSession,
  SIGN_IN_WAIT_MS,
  SignInRefused,
} from '@app/web';
import { Controller, Get, Logger, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PublicPage } from './public-page.decorator';
import { TokenVault } from './token-vault';

declare module 'express-session' {
  interface SessionData {
    /** A sign-in sent to the provider, until its callback (once) or SIGN_IN_WAIT_MS. */
    pendingSignIn?: PendingSignIn & { startedAt: number };
  }
}

/** The page a refused or failed sign-in gets: its heading and sentence, chosen by the case, never an error's text. */
const PAGES = {
  unreachable: {
    status: 503,
    title: 'Identity provider unreachable',
    message:
      'The identity provider could not be reached, so nobody can sign in with it right now. Try again in a minute; if it stays away, an administrator can use the break-glass sign-in with an admin token.',
  },
  noRole: {
    status: 403,
    title: 'No console role',
    message:
      "Your identity provider signed you in, but you hold no role that the gateway maps to console rights. Ask an administrator to add you to an operators' group. Nothing was stored.",
  },
  notInProgress: {
    status: 400,
    title: 'Sign-in not accepted',
    message: 'This sign-in was not started here, was already used or has expired. Start again with the sign-in button.',
  },
  refused: {
    status: 401,
    title: 'Sign-in not accepted',
    message:
      "The answer from the identity provider did not pass the console's checks (its state, nonce, code or ID token), so nobody was signed in. Start again with the sign-in button.",
  },
  providerError: {
    status: 401,
    title: 'Sign-in refused by the identity provider',
    message: 'The identity provider did not sign you in. Start again with the sign-in button.',
  },
} as const;

/**
 * Sign-in with the operators' identity provider (issue #51, docs/sso.md): "Sign in with <provider>" sends the person
 * there (authorization code + PKCE + state + nonce), the callback exchanges the code and hands the ID token to the
 * admin API (POST /sessions/oidc), which answers a short-lived admin token named for the person: the console holds
 * no token that could mint one. The session then holds it sealed, like a pasted token. Every refusal is a page of
 * its own, never a 500.
 */
@Controller('sign-in/oidc')
export class OidcSignInController {
  private readonly logger = new Logger(OidcSignInController.name);

  constructor(
    private readonly admin: AdminApi,
    private readonly vault: TokenVault,
    private readonly provider: OidcIdentityProvider,
  ) {}

  /** A link, not a form: Chromium holds a form's redirects to CSP form-action, and this one leaves for the provider. */
  @PublicPage()
  @Get()
  async start(@Req() request: Request, @Res() response: Response): Promise<void> {
    let started: Awaited<ReturnType<OidcIdentityProvider['start']>>;
    try {
      started = await this.provider.start(callbackUri(request, response));
    } catch (error) {
      if (!(error instanceof ProviderUnreachable)) throw error;
      this.logger.warn({ event: 'console.sso.unreachable', message: error.message });
      return this.page(response, 'unreachable');
    }
    request.session.pendingSignIn = { ...started.pending, startedAt: Date.now() };
    await saveSession(request);
    response.redirect(303, started.url);
  }

  @PublicPage()
  @Get('callback')
  async callback(@Req() request: Request, @Res() response: Response): Promise<void> {
    const pending = request.session.pendingSignIn;
    // Once: a replayed callback (or a second tab's) finds nothing to finish.
    delete request.session.pendingSignIn;
    if (!pending || Date.now() - pending.startedAt > SIGN_IN_WAIT_MS) {
      this.logger.warn({ event: 'console.sso.refused', reason: 'NOT_IN_PROGRESS' });
      await saveSession(request).catch(() => undefined);
      return this.page(response, 'notInProgress');
    }
    await saveSession(request);
    const url = new URL(pending.redirectUri);
    url.search = new URL(request.originalUrl, 'http://x').search;
    let idToken: string;
    try {
      ({ idToken } = await this.provider.finish(url, pending));
    } catch (error) {
      if (error instanceof ProviderUnreachable) {
        this.logger.warn({ event: 'console.sso.unreachable', message: error.message });
        return this.page(response, 'unreachable');
      }
      if (error instanceof SignInRefused) {
        this.logger.warn({ event: 'console.sso.refused', reason: error.reason, message: error.message });
        const fromProvider = new URL(request.originalUrl, 'http://x').searchParams.has('error');
        return this.page(response, fromProvider ? 'providerError' : 'refused');
      }
      throw error;
    }
    let session: {
      token: string;
      id: string;
      name: string;
      email: string;
      person: string;
      scopes: string[];
      plans: string[] | null;
      expiresAt: string;
    };
    try {
      session = await this.admin.withoutToken().POST('/sessions/oidc', {
        body: { idToken, ...(request.ip ? { address: request.ip } : {}) },
      });
    } catch (error) {
      if (error instanceof AdminApiError) {
        this.logger.warn({ event: 'console.sso.refused', reason: error.code, status: error.status });
        if (error.status === 403) return this.page(response, 'noRole');
        if (error.status === 503) return this.page(response, 'unreachable');
        if (error.status === 401) return this.page(response, 'refused');
      }
      throw error;
    }
    await regenerateSession(request);
    request.session.operator = {
      id: session.id,
      name: session.name,
      scopes: session.scopes as never,
      ownConsumersOnly: false,
      plans: session.plans,
      expiresAt: session.expiresAt,
      actsForUsers: false,
      sealedToken: this.vault.seal(session.token),
      person: { email: session.email, label: session.person, sealedIdToken: this.vault.seal(idToken) },
    };
    this.logger.log({ event: 'console.sso.sign-in', person: session.person });
    await redirectAfterSave(request, response, '/');
  }

  private page(response: Response, which: keyof typeof PAGES): void {
    const { status, ...page } = PAGES[which];
    response.status(status).render('sign-in-problem', { ...page, provider: this.provider.name });
  }
}

/** This console's callback address: CONSOLE_PUBLIC_URL's, else the one the browser reached (a host the console answers). */
export function callbackUri(request: Request, response: Response): string {
  return `${consoleOrigin(request)}${href(String(response.locals.base ?? ''), '/sign-in/oidc/callback')}`;
}

/** CONSOLE_PUBLIC_URL's origin when set (the app's locals), else the request's own (its Host is allow-listed). */
export function consoleOrigin(request: Request): string {
  const configured = (request.app.locals as { publicOrigin?: string }).publicOrigin;
  return configured ?? `${request.protocol}://${request.get('host')}`;
}
