import {
  Body,
  Controller,
  Get,
  HttpCode,
  Logger,
  NotFoundException,
  Param,
  Post,
  Query,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import { SkipThrottle } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import {
  PendingSignIn,
  ProviderUnreachable,
  redirectAfterSave,
  saveSession,
  setFlash,
  SIGN_IN_WAIT_MS,
  SignInAudit,
  SignInRefused,
} from '@app/web';
import { AccountSignIn } from '../accounts/account-sign-in';
import { AccountsService, hashToken, LINK_TTL_MS } from '../accounts/accounts.service';
import { clientBlock, emailHash } from '../throttle/client-address';
import { auditedPerson, SignInAttempts } from '../throttle/sign-in-attempts';
import { SignInThrottlerGuard } from '../throttle/sign-in-throttler.guard';
import { IdentityLinks, personLabel, personOf, ProviderPerson, ProviderSignInOutcome } from './identity-links';
import { PortalIdentityProvider, PortalIdentityProviders } from './portal-identity-providers';
import { renderSsoView } from './sso.views';

declare module 'express-session' {
  interface SessionData {
    /**
     * A sign-in sent to a provider, until its callback (once) or SIGN_IN_WAIT_MS; `linkTo`: started by the signed-in
     * account of that id, to link the identity to it (the sign-in methods page).
     */
    providerSignIn?: PendingSignIn & { providerId: string; startedAt: number; linkTo?: string };
    /**
     * A provider identity waiting for the owner of the account with its email to prove it (docs/sso.md), for
     * LINK_TTL_MS; `linkTokenHash`: the mailed link's, which works only in this session.
     */
    pendingLink?: ProviderPerson & { providerId: string; accountId: string; startedAt: number; linkTokenHash?: string };
  }
}

/** The pages of a provider sign-in that signed nobody in: heading, sentence and status, chosen by the case. */
const PROBLEMS = {
  unreachable: {
    status: 503,
    title: 'Identity provider unreachable',
    message: (p: string) =>
      `${p} could not be reached, so nobody can sign in with it right now. Try again in a minute, or sign in with your email and password if your account has one.`,
  },
  providerError: {
    status: 401,
    title: 'Sign-in refused by the identity provider',
    message: (p: string) => `${p} did not sign you in. Start again with the "Sign in with ${p}" button.`,
  },
  refused: {
    status: 401,
    title: 'Sign-in not accepted',
    message: (p: string) =>
      `The answer from ${p} did not pass the portal's checks (its state, nonce, code or ID token), so nobody was signed in. Start again with the "Sign in with ${p}" button.`,
  },
  notInProgress: {
    status: 400,
    title: 'Sign-in not accepted',
    message: (p: string) =>
      `This sign-in was not started here, was already used or has expired. Start again with the "Sign in with ${p}" button.`,
  },
  EMAIL_NOT_VERIFIED: {
    status: 403,
    title: 'Email address not verified',
    message: (p: string) =>
      `${p} does not say that your email address is verified, so the portal cannot give you an account for it. Verify it at ${p}, or ask its administrators, then sign in again.`,
  },
  EMAIL_NOT_ACCEPTED: {
    status: 403,
    title: 'Email address not accepted',
    message: (p: string) =>
      `The email address ${p} gave for you is not one the portal accepts (one plain address such as name@example.com).`,
  },
  DOMAIN_OF_ANOTHER_PROVIDER: {
    status: 403,
    title: 'Use your company sign-in',
    message: (p: string) =>
      `Addresses of your email domain sign in with their company's own provider, not with ${p}. Use that provider's button on the sign-in page.`,
  },
} as const;

/**
 * "Sign in with <provider>" (issue #51, docs/sso.md): the authorization code flow with PKCE, state and nonce
 * (libs/web's OidcIdentityProvider), then the account (IdentityLinks) and the same end as every sign-in
 * (AccountSignIn: a Free consumer and key for a new account, a regenerated session). An existing account with the
 * provider's email is linked only after its owner proves it, here (its password) or by a mailed link opened in this
 * browser. Each sign-in, refusal and link in the admin audit, naming the person (email, subject, issuer).
 */
@Controller('login')
export class ProviderSignInController {
  private readonly logger = new Logger('ProviderSignIn');

  constructor(
    private readonly providers: PortalIdentityProviders,
    private readonly links: IdentityLinks,
    private readonly accounts: AccountsService,
    private readonly signIns: AccountSignIn,
    private readonly attempts: SignInAttempts,
    private readonly audit: SignInAudit,
  ) {}

  /** A link, not a form: Chromium holds a form's redirects to CSP form-action, and this one leaves for the provider. */
  @Get('oidc/:provider')
  @SkipThrottle({ account: true })
  @UseGuards(SignInThrottlerGuard)
  async start(@Param('provider') id: string, @Req() request: Request, @Res() response: Response): Promise<void> {
    const provider = this.provider(id);
    let started: Awaited<ReturnType<PortalIdentityProvider['client']['start']>>;
    try {
      started = await provider.client.start(this.providers.callbackUri(id));
    } catch (error) {
      if (!(error instanceof ProviderUnreachable)) throw error;
      this.logger.warn({ event: 'portal.sso.unreachable', provider: id, message: error.message });
      return this.problem(response, provider, 'unreachable');
    }
    request.session.providerSignIn = { ...started.pending, providerId: id, startedAt: Date.now() };
    await saveSession(request);
    response.redirect(303, started.url);
  }

  @Get('oidc/:provider/callback')
  @SkipThrottle({ account: true })
  @UseGuards(SignInThrottlerGuard)
  async callback(@Param('provider') id: string, @Req() request: Request, @Res() response: Response): Promise<void> {
    const provider = this.provider(id);
    const pending = request.session.providerSignIn;
    // Once: a replayed callback (or a second tab's) finds nothing to finish.
    delete request.session.providerSignIn;
    const address = clientBlock(request);
    if (!pending || pending.providerId !== id || Date.now() - pending.startedAt > SIGN_IN_WAIT_MS) {
      await saveSession(request).catch(() => undefined);
      return this.refuse(response, provider, 'notInProgress', 'NOT_IN_PROGRESS', address);
    }
    await saveSession(request);
    const url = new URL(pending.redirectUri);
    url.search = new URL(request.originalUrl, 'http://x').search;
    let person: ProviderPerson;
    try {
      const { claims } = await provider.client.finish(url, pending);
      person = personOf(claims.iss, claims);
    } catch (error) {
      if (error instanceof ProviderUnreachable) {
        this.logger.warn({ event: 'portal.sso.unreachable', provider: id, message: error.message });
        return this.problem(response, provider, 'unreachable');
      }
      if (!(error instanceof SignInRefused)) throw error;
      const fromProvider = url.searchParams.has('error');
      return this.refuse(response, provider, fromProvider ? 'providerError' : 'refused', error.reason, address);
    }
    if (pending.linkTo !== undefined)
      return this.linkToSignedIn(request, response, provider, person, pending.linkTo, address);
    const outcome: ProviderSignInOutcome = await this.links.signIn(provider.settings, person);
    if (outcome.code === 'REFUSED')
      return this.refuse(response, provider, outcome.reason, outcome.reason, address, person);
    if (outcome.code === 'PROOF_REQUIRED') {
      request.session.pendingLink = { ...person, providerId: id, accountId: outcome.account.id, startedAt: Date.now() };
      this.report('sign-in-failed', person, address, 'LINK_REQUIRED');
      return redirectAfterSave(request, response, '/login/link');
    }
    this.logger.log({ event: 'portal.sso.sign-in', provider: id, how: outcome.how, account: emailHash(person.email) });
    this.report('sign-in', person, address, outcome.how === 'KNOWN' ? undefined : `ACCOUNT_${outcome.how}`);
    await this.signIns.signIn(outcome.account, request, response, { identity: person });
  }

  /** The identity waiting for proof: its account's password, or a mailed link. */
  @Get('link')
  linkPage(@Req() request: Request, @Res() response: Response): void {
    const pending = this.pendingLink(request);
    if (!pending) return this.noLinkPending(response);
    const provider = this.provider(pending.providerId);
    renderSsoView(response, 'link-account', {
      title: 'Link your account',
      email: pending.email,
      provider: provider.settings.name,
      mailed: pending.linkTokenHash !== undefined,
    });
  }

  /** The account's password proves it: the identity is linked and the account signed in. Throttled as sign-in is. */
  @Post('link')
  @HttpCode(200)
  @SkipThrottle({ account: true })
  @UseGuards(SignInThrottlerGuard)
  async linkWithPassword(
    @Body() body: { password?: unknown } | undefined,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const pending = this.pendingLink(request);
    if (!pending) return this.noLinkPending(response);
    const provider = this.provider(pending.providerId);
    const page = { title: 'Link your account', email: pending.email, provider: provider.settings.name };
    const block = clientBlock(request);
    const verdict = await this.attempts.admit(pending.email, block);
    if (!verdict.allowed)
      return renderSsoView(
        response,
        'link-account',
        { ...page, failed: 'Too many failed attempts on this account. Wait a while, or use the link by email.' },
        429,
      );
    const account = await this.accounts.find(pending.accountId);
    const password = typeof body?.password === 'string' ? body.password : '';
    if (!account || !account.verifiedAt || !(await this.accounts.passwordMatches(account, password))) {
      await this.attempts.failed(pending.email, block);
      return renderSsoView(
        response,
        'link-account',
        { ...page, errors: { password: 'This is not the password of this account.' } },
        401,
      );
    }
    await this.attempts.remember(pending.email, block);
    await this.linkAndSignIn(request, response, provider, pending, 'PASSWORD');
  }

  /** A single-use link to the account's mailbox, which works only in this browser (this session). Once per proof. */
  @Post('link/mail')
  @HttpCode(200)
  @SkipThrottle({ account: true })
  @UseGuards(SignInThrottlerGuard)
  async mailLink(@Req() request: Request, @Res() response: Response): Promise<void> {
    const pending = this.pendingLink(request);
    if (!pending) return this.noLinkPending(response);
    const provider = this.provider(pending.providerId);
    if (pending.linkTokenHash === undefined) {
      const token = await this.accounts.issueLinkToken(pending.accountId);
      request.session.pendingLink = { ...pending, linkTokenHash: hashToken(token) };
      this.accounts.sendLinkMail(pending.email, provider.settings.name, token);
    }
    await redirectAfterSave(request, response, '/login/link');
  }

  /** The mailed link: a button (a POST), in the browser whose session holds the identity, or why not. */
  @Get('link/confirm')
  linkConfirmPage(@Query('token') query: unknown, @Req() request: Request, @Res() response: Response): void {
    const token = typeof query === 'string' ? query : '';
    const pending = this.pendingLink(request);
    if (!pending || pending.linkTokenHash !== hashToken(token)) return this.linkElsewhere(response);
    renderSsoView(response, 'link-confirm', {
      title: 'Link your account',
      token,
      email: pending.email,
      provider: this.provider(pending.providerId).settings.name,
    });
  }

  @Post('link/confirm')
  @HttpCode(200)
  @SkipThrottle({ account: true })
  @UseGuards(SignInThrottlerGuard)
  async linkWithMail(
    @Body() body: { token?: unknown } | undefined,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const token = typeof body?.token === 'string' ? body.token : '';
    const pending = this.pendingLink(request);
    if (!pending || pending.linkTokenHash !== hashToken(token)) return this.linkElsewhere(response);
    const used = await this.accounts.useLinkToken(token, pending.accountId);
    if (!used) return this.linkElsewhere(response);
    // The mailbox was proved from this block, as a reset's link proves it: the sign-in throttle never delays it.
    await this.attempts.remember(pending.email, clientBlock(request));
    await this.linkAndSignIn(request, response, this.provider(pending.providerId), pending, 'MAIL');
  }

  private async linkAndSignIn(
    request: Request,
    response: Response,
    provider: PortalIdentityProvider,
    pending: NonNullable<Request['session']['pendingLink']>,
    proof: 'PASSWORD' | 'MAIL',
  ): Promise<void> {
    const account = await this.accounts.find(pending.accountId);
    if (!account?.verifiedAt || !(await this.links.link(account.id, pending))) {
      delete request.session.pendingLink;
      return this.refuse(response, provider, 'refused', 'LINK_FAILED', clientBlock(request), pending);
    }
    this.logger.log({
      event: 'portal.sso.linked',
      provider: provider.settings.id,
      proof,
      account: emailHash(pending.email),
    });
    this.report('sign-in', pending, clientBlock(request), `ACCOUNT_LINKED_BY_${proof}`);
    const { issuer, subject } = pending;
    await this.signIns.signIn(account, request, response, { identity: { issuer, subject } });
  }

  /**
   * The callback of a link the signed-in account started: the identity is linked to it, unless the session is no
   * longer that account's (signed out, or in as another, meanwhile) or the identity signs in to another account.
   */
  private async linkToSignedIn(
    request: Request,
    response: Response,
    provider: PortalIdentityProvider,
    person: ProviderPerson,
    accountId: string,
    address: string,
  ): Promise<void> {
    if (request.session.accountId !== accountId)
      return this.refuse(response, provider, 'notInProgress', 'NOT_IN_PROGRESS', address, person);
    if (!(await this.links.link(accountId, person))) {
      this.logger.warn({ event: 'portal.sso.link-refused', provider: provider.settings.id, reason: 'OTHER_ACCOUNT' });
      const name = provider.settings.name;
      return renderSsoView(
        response,
        'sign-in-problem',
        {
          title: 'Already linked to another account',
          message: `This ${name} identity (${person.email}) already signs in to another portal account, so it was not linked to this one. Unlink it there first.`,
          back: { href: '/sign-in-methods', text: 'Back to your sign-in methods' },
        },
        409,
      );
    }
    this.logger.log({ event: 'portal.sso.linked', provider: provider.settings.id, account: emailHash(person.email) });
    this.audit.report({ kind: 'identity-linked', ...auditedPerson(personLabel(person), address) });
    setFlash(request, 'success', `${provider.settings.name} now signs you in to this account.`);
    await redirectAfterSave(request, response, '/sign-in-methods');
  }

  private provider(id: string): PortalIdentityProvider {
    const provider = this.providers.find(id);
    if (!provider) throw new NotFoundException('No such identity provider.');
    return provider;
  }

  private pendingLink(request: Request) {
    const pending = request.session?.pendingLink;
    if (!pending || Date.now() - pending.startedAt > LINK_TTL_MS || !this.providers.find(pending.providerId))
      return undefined;
    return pending;
  }

  private noLinkPending(response: Response): void {
    response.status(400).render('sign-in-problem', {
      title: 'Nothing to link',
      message:
        'No sign-in with an identity provider is waiting to be linked in this browser, or it has expired. Start again from the sign-in page.',
    });
  }

  private linkElsewhere(response: Response): void {
    renderSsoView(
      response,
      'link-confirm',
      {
        title: 'Link your account',
        failed:
          'This link works once, for one hour, and only in the browser where you signed in with your identity provider. Open it there, or start again from the sign-in page.',
      },
      400,
    );
  }

  private refuse(
    response: Response,
    provider: PortalIdentityProvider,
    page: keyof typeof PROBLEMS,
    reason: string,
    address: string,
    person?: ProviderPerson,
  ): void {
    this.logger.warn({
      event: 'portal.sso.refused',
      provider: provider.settings.id,
      reason,
      ...(person ? { account: emailHash(person.email) } : {}),
    });
    this.report('sign-in-failed', person, address, reason);
    this.problem(response, provider, page);
  }

  private problem(response: Response, provider: PortalIdentityProvider, page: keyof typeof PROBLEMS): void {
    const { status, title, message } = PROBLEMS[page];
    renderSsoView(response, 'sign-in-problem', { title, message: message(provider.settings.name) }, status);
  }

  /** After the answer, never waited for (SignInAudit); the person named when the provider told who they are. */
  private report(
    kind: 'sign-in' | 'sign-in-failed',
    person: ProviderPerson | undefined,
    address: string,
    reason?: string,
  ): void {
    const code = reason
      ?.toUpperCase()
      .replace(/[^A-Z0-9_]/g, '_')
      .slice(0, 64);
    this.audit.report({
      kind,
      ...auditedPerson(person ? personLabel(person) : '', address),
      ...(code && /^[A-Z]/.test(code) ? { reason: code } : {}),
    });
  }
}
