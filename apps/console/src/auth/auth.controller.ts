import { addressBlock } from '@app/platform';
import {
  AdminApi,
  AdminApiError,
  endSession,
  href,
  isBearerToken,
  redirectAfterSave,
  regenerateSession,
  SignInAudit,
} from '@app/web';
import {
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  Logger,
  NotFoundException,
  Optional,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import type { AdminCurrentToken } from '@app/web';
import { OidcIdentityProvider } from '@app/web';
import { consoleOrigin } from './oidc-sign-in.controller';
import { PublicPage } from './public-page.decorator';
import { ConsoleSignInThrottle, ConsoleSignInVerdict } from './sign-in-throttle';
import { TokenVault } from './token-vault';

/** Whether the break-glass sign-in with a pasted admin token is on (CONSOLE_TOKEN_SIGN_IN). */
export const TOKEN_SIGN_IN = Symbol('TOKEN_SIGN_IN');

const REFUSED = 'This token was not accepted: it is wrong, revoked or expired. Nothing was stored.';
/** A token broken when pasted (a line break, a tab, a space, an invisible character): never sent, never logged. */
const BROKEN_TOKEN =
  'This token has a line break, a space or an invisible character in it: an admin token is one unbroken line. Copy it again and paste it whole.';

/** The sign-in page's refusal for each throttle code (the code chooses, never a message). */
function throttledMessage(verdict: Exclude<ConsoleSignInVerdict, { allowed: true }>): string {
  const wait = `${verdict.retryAfterSeconds} second${verdict.retryAfterSeconds === 1 ? '' : 's'}`;
  return verdict.code === 'SLOWED_AFTER_FAILURES'
    ? `Too many refused tokens from your address. Wait ${wait} and try again.`
    : `Too many sign-in attempts from your address. Wait ${wait} and try again.`;
}

/** The address an audit event names: the client's as Express saw it (CONSOLE_TRUST_PROXY), when it has one. */
function addressOf(request: Request): { address?: string } {
  return request.ip ? { address: request.ip } : {};
}

/**
 * Sign-in with the operator's own admin token: the console asks GET /token with it; only an accepted token starts
 * a session (a new session id), held server-side and sealed, never in a cookie or a page. Sign-out ends it.
 * Every sign-in, refused token and throttled attempt is reported to the admin audit after the answer (SignInAudit:
 * a sign-in with the operator's own token when it may act for users, else with CONSOLE_AUDIT_TOKEN; the others
 * with CONSOLE_AUDIT_TOKEN only), never slowing nor failing the sign-in (docs/console.md).
 */
@Controller()
export class AuthController {
  private readonly logger = new Logger(AuthController.name);
  /** Said once per process: the first operator whose token may not name their address. */
  private saidNoAddress = false;

  constructor(
    private readonly admin: AdminApi,
    private readonly vault: TokenVault,
    private readonly throttle: ConsoleSignInThrottle,
    private readonly audit: SignInAudit,
    @Inject(TOKEN_SIGN_IN) private readonly tokenSignIn: boolean,
    @Optional() private readonly provider?: OidcIdentityProvider,
  ) {}

  /** The sign-in page's parts: the provider's button, the token form (unless switched off). */
  private signInView(extra: Record<string, unknown>): Record<string, unknown> {
    return { title: 'Sign in', provider: this.provider?.name, tokenSignIn: this.tokenSignIn, ...extra };
  }

  @PublicPage()
  @Get('sign-in')
  signInPage(
    @Req() request: Request,
    @Res() response: Response,
    @Query('ended') ended?: string,
    @Query('out') out?: string,
  ): void {
    if (request.session.operator) return response.redirect(303, href(String(response.locals.base), '/'));
    response.render(
      'sign-in',
      this.signInView({
        notice:
          ended === '1'
            ? 'Your session ended: the admin API no longer accepts its token (revoked or expired). Sign in with a valid token.'
            : ended === 'sso'
              ? 'Your session ended: a sign-in with the identity provider lasts a limited time (or your access was withdrawn). Sign in again.'
              : out === '1'
                ? 'You are signed out. The console holds your token no more.'
                : undefined,
      }),
    );
  }

  @PublicPage()
  @Post('sign-in')
  @HttpCode(200)
  async signIn(@Req() request: Request, @Res() response: Response, @Body() body: { token?: unknown }): Promise<void> {
    // Switched off (CONSOLE_TOKEN_SIGN_IN=false): the identity provider is the only way in.
    if (!this.tokenSignIn) throw new NotFoundException('Token sign-in is switched off here.');
    const token = typeof body.token === 'string' ? body.token.trim() : '';
    if (token === '')
      return response.status(400).render('sign-in', this.signInView({ error: 'Enter your admin token.' }));
    // Refused before anything else sees it: a header cannot carry it, and no error about it may quote it in a log.
    if (!isBearerToken(token)) return response.status(400).render('sign-in', this.signInView({ error: BROKEN_TOKEN }));
    // Throttled per address block (IPv6 by /64; behind a proxy, the client's: CONSOLE_TRUST_PROXY).
    const block = addressBlock(request.ip);
    const verdict = this.throttle.admit(block);
    if (!verdict.allowed) {
      this.audit.report({ kind: 'lockout', reason: verdict.code, ...addressOf(request) });
      response.setHeader('Retry-After', String(verdict.retryAfterSeconds));
      return response.status(429).render('sign-in', this.signInView({ error: throttledMessage(verdict) }));
    }
    let record: AdminCurrentToken;
    try {
      record = await this.admin.as(token).GET('/token');
    } catch (error) {
      if (error instanceof AdminApiError && (error.status === 401 || error.status === 403 || error.status === 400)) {
        this.throttle.failed(block, error.code);
        this.audit.report({ kind: 'sign-in-failed', reason: error.code, ...addressOf(request) });
        return response.status(401).render('sign-in', this.signInView({ error: REFUSED }));
      }
      throw error;
    }
    this.throttle.succeeded(block);
    const signedIn = { kind: 'sign-in' as const, subject: `operator:${record.name}`, ...addressOf(request) };
    if (record.actsForUsers) this.audit.report(signedIn, token);
    else if (this.audit.enabled) this.audit.report(signedIn);
    else this.logger.log({ event: 'console.sign-in', operator: record.name, address: block });
    if (!record.actsForUsers && !this.saidNoAddress) {
      this.saidNoAddress = true;
      this.logger.warn(
        "The audit will not record operators' addresses: their tokens lack actsForUsers (root grants it, docs/console.md).",
      );
    }
    await regenerateSession(request);
    request.session.operator = { ...record, sealedToken: this.vault.seal(token) };
    await redirectAfterSave(request, response, '/');
  }

  @Post('sign-out')
  async signOut(@Req() request: Request, @Res() response: Response): Promise<void> {
    const person = request.session.operator?.person;
    const token = request.session.operator ? this.vault.open(request.session.operator.sealedToken) : undefined;
    const idToken = person ? this.vault.open(person.sealedIdToken) : undefined;
    // A person's session credential is revoked at the admin API (a `user.sign-out` row names them); a pasted token
    // stays the operator's own, as before.
    if (person && token)
      await this.admin
        .as(token)
        .DELETE('/sessions/current')
        .catch((error: Error) => this.logger.warn({ event: 'console.sso.sign-out', message: error.message }));
    await endSession(request, response);
    // The sign-in page says the operator is signed out (issue #37.9), not just that they may sign in.
    const signedOut = href(String(response.locals.base), '/sign-in?out=1');
    // And at the provider (RP-initiated logout), which sends them back here.
    const atProvider =
      person && this.provider
        ? await this.provider.endSessionUrl(idToken, `${consoleOrigin(request)}${signedOut}`)
        : undefined;
    response.redirect(303, atProvider ?? signedOut);
  }
}
