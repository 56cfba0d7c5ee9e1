import { Body, Controller, Get, HttpCode, Inject, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { destroySession, href, redirectAfterSave, regenerateSession, setFlash, SignInAudit } from '@app/web';
import { PORTAL_CONFIG, PortalConfig } from '../config/portal.config';
import { PortalOidcProvider, providerRequiredFor } from '../config/portal-oidc.config';
import { SkipThrottle } from '@nestjs/throttler';
import { SignInRequired } from './sign-in-required';
import { clientBlock } from '../throttle/client-address';
import { ConsumerCap } from '../throttle/consumer-cap';
import { auditedPerson, SignInAttempts, SignInVerdict } from '../throttle/sign-in-attempts';
import { SignInThrottlerGuard } from '../throttle/sign-in-throttler.guard';
import {
  NewPasswordForm,
  NewPasswordFormPipe,
  ResetForm,
  ResetFormPipe,
  SignInForm,
  SignInFormPipe,
  SignUpForm,
  SignUpFormPipe,
  VerifyForm,
  VerifyFormPipe,
} from './account-form.pipe';
import { AccountEntity } from './account.entity';
import { AccountSignIn } from './account-sign-in';
import { AccountsService } from './accounts.service';
import {
  CheckEmailView,
  Page,
  renderView,
  KeyPendingView,
  ResetView,
  SignInView,
  SignUpView,
  TITLES,
  VerifyView,
} from './accounts.views';
import { ThrottledFormFilter } from './throttled-form.filter';

const SIGN_IN_FAILED = 'Wrong email or password, or the email is not verified yet.';
const WRONG_PASSWORD = 'Enter the password you chose when you signed up (this link stays valid until it is used).';

/** The password forms' refusal of an address whose domain must sign in with its company's provider. */
function mustUseProvider(email: string, provider: PortalOidcProvider): string {
  const domain = email.slice(email.lastIndexOf('@') + 1);
  return `Addresses at ${domain} sign in with ${provider.name}: use the "Sign in with ${provider.name}" button.`;
}

/** The sign-in page's refusal for each throttle code (the code chooses, never a message). */
function throttledMessage(verdict: Exclude<SignInVerdict, { allowed: true }>): string {
  if (verdict.code === 'ACCOUNT_DELAY')
    return `Too many failed sign-ins on this account. Wait ${verdict.retryAfterSeconds} second${verdict.retryAfterSeconds === 1 ? '' : 's'} and try again, or reset your password.`;
  const minutes = Math.max(1, Math.ceil(verdict.retryAfterSeconds / 60));
  return `Too many attempts. Wait ${minutes} minute${minutes === 1 ? '' : 's'} and try again, or reset your password.`;
}

/**
 * Sign-up, verification, sign-in, sign-out and password reset: forms that work without script. Each page is a typed
 * view (accounts.views.ts); each form's body is read and checked by its pipe (account-form.pipe.ts) before the
 * handler runs; a page of its own status (400, 401, 429) or a redirect (303, Post/Redirect/Get) is answered by hand.
 */
@Controller()
export class AccountsController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly attempts: SignInAttempts,
    private readonly consumerCap: ConsumerCap,
    private readonly signIns: AccountSignIn,
    private readonly audit: SignInAudit,
    @Inject(PORTAL_CONFIG) private readonly config: PortalConfig,
  ) {}

  /** The provider an email must use instead of a password (its domain is required by one: docs/sso.md). */
  private requiredProvider(email: string): PortalOidcProvider | undefined {
    return providerRequiredFor(email, this.config.oidcProviders);
  }

  @Get()
  home(@Req() request: Request, @Res() response: Response): void {
    if (request.session?.accountId) return response.redirect(303, href(String(response.locals.base), '/dashboard'));
    renderView(response, 'home', { title: TITLES.home });
  }

  @Get('signup')
  @Page('signup')
  signUpForm(): SignUpView {
    return { title: TITLES.signup };
  }

  @Post('signup')
  @HttpCode(200)
  @UseGuards(SignInThrottlerGuard)
  @UseFilters(ThrottledFormFilter)
  signUp(@Body(SignUpFormPipe) form: SignUpForm, @Res() response: Response): void {
    // A company's own developers use its provider: known by the domain alone, nothing told about any account.
    const provider = this.requiredProvider(form.email);
    if (provider)
      return renderView(
        response,
        'signup',
        { title: TITLES.signup, email: form.email, errors: { email: mustUseProvider(form.email, provider) } },
        400,
      );
    // Answered before any work that depends on the address (whether it has an account): see AccountsService.
    this.accounts.signUp(form.email, form.password);
    renderView(response, 'check-email', { title: TITLES['check-email'], email: form.email });
  }

  /** The form names the link's account in a read-only username field, so a password manager pairs the password. */
  @Get('verify')
  @Page('verify')
  async verifyForm(@Query('token') query: unknown): Promise<VerifyView> {
    const token = typeof query === 'string' ? query : '';
    return { title: TITLES.verify, token, email: await this.accounts.verifyLinkEmail(token) };
  }

  /**
   * A form, not the link itself: mail scanners that open links must not use the token (nor see the key). It asks
   * for the sign-up's password: only whoever holds both the mailbox and the password verifies the account.
   */
  @Post('verify')
  @HttpCode(200)
  async verify(
    @Body(VerifyFormPipe) { token, password }: VerifyForm,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const outcome = await this.accounts.verify(token, password);
    if (outcome.code === 'LINK_INVALID')
      return renderView(response, 'verify', { title: TITLES.verify, failed: true }, 400);
    if (outcome.code === 'WRONG_PASSWORD')
      return renderView(
        response,
        'verify',
        { title: TITLES.verify, token, email: outcome.email, errors: { password: WRONG_PASSWORD } },
        400,
      );
    const account = outcome.account;
    // The block that proved the mailbox and the password is the owner's: the sign-in throttle never delays it.
    await this.attempts.remember(account.email, clientBlock(request));
    const consumer = account.consumerName ? undefined : await this.signIns.createConsumer(account, request);
    await regenerateSession(request);
    request.session.accountId = account.id;
    if (!consumer) {
      setFlash(request, 'success', 'Your email is verified.');
      return redirectAfterSave(request, response, '/dashboard');
    }
    await this.signIns.showNewConsumer(request, response, consumer);
  }

  @Get('login')
  @Page('login')
  signInForm(@Query('out') out: unknown): SignInView {
    // After a sign-out the page says so (issue #37.9), not just that one may sign in.
    return { title: TITLES.login, signedOut: out === '1' };
  }

  /** Per address block (the guard), then per (account, address block) pair and per account (SignInAttempts). */
  @Post('login')
  @HttpCode(200)
  @SkipThrottle({ account: true })
  @UseGuards(SignInThrottlerGuard)
  @UseFilters(ThrottledFormFilter)
  async signIn(
    @Body(SignInFormPipe) { email, typedEmail, password }: SignInForm,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    // Before any password check: the domain alone says it (no account is looked up, no failure counted).
    const provider = this.requiredProvider(email);
    if (provider)
      return renderView(
        response,
        'login',
        { title: TITLES.login, email: typedEmail, failed: mustUseProvider(email, provider) },
        400,
      );
    const block = clientBlock(request);
    const verdict = await this.attempts.admit(email, block);
    if (!verdict.allowed)
      return renderView(
        response,
        'login',
        { title: TITLES.login, email: typedEmail, failed: throttledMessage(verdict) },
        429,
      );
    const account = await this.accounts.signIn(email, password);
    if (!account || !account.verifiedAt) {
      await this.attempts.failed(email, block);
      return renderView(response, 'login', { title: TITLES.login, email: typedEmail, failed: SIGN_IN_FAILED }, 401);
    }
    await this.attempts.succeeded(email, block);
    // Never refused for want of a key; a new session id (session fixation): AccountSignIn.
    await this.signIns.signIn(account, request, response);
  }

  /** A signed-in account without a key yet (its block's hourly cap): when it comes, and a button to ask for it. */
  @Get('key')
  async keyPendingPage(@Req() request: Request, @Res() response: Response): Promise<void> {
    const account = await this.signedInAccount(request);
    if (account.consumerName) return response.redirect(303, href(String(response.locals.base), '/dashboard'));
    const retryAt = await this.consumerCap.nextFor(clientBlock(request));
    renderView(response, 'key-pending', this.keyPendingView(retryAt));
  }

  /** Makes the account's consumer and first key now if its block's hour allows, else says when again. */
  @Post('key')
  @HttpCode(200)
  @SkipThrottle({ account: true })
  @UseGuards(SignInThrottlerGuard)
  @UseFilters(ThrottledFormFilter)
  async claimKey(@Req() request: Request, @Res() response: Response): Promise<void> {
    const account = await this.signedInAccount(request);
    if (account.consumerName) return response.redirect(303, href(String(response.locals.base), '/dashboard'));
    await this.signIns.showNewConsumer(request, response, await this.signIns.createConsumer(account, request));
  }

  @Post('logout')
  @HttpCode(200)
  async signOut(@Req() request: Request, @Res() response: Response): Promise<void> {
    const id = request.session?.accountId;
    const account = id ? await this.accounts.find(id) : null;
    if (account) {
      const identity = request.session.identity;
      const person = identity ? `${account.email} (${identity.subject} at ${identity.issuer})` : account.email;
      this.audit.report({ kind: 'sign-out', ...auditedPerson(person, clientBlock(request)) });
    }
    await destroySession(request);
    response.clearCookie('portal.sid', { path: String(response.locals.base) || '/' });
    response.redirect(303, href(String(response.locals.base), '/login?out=1'));
  }

  @Get('reset')
  @Page('reset')
  resetForm(): ResetView {
    return { title: TITLES.reset };
  }

  @Post('reset')
  @HttpCode(200)
  @UseGuards(SignInThrottlerGuard)
  @UseFilters(ThrottledFormFilter)
  @Page('check-email')
  requestReset(@Body(ResetFormPipe) { email }: ResetForm): CheckEmailView {
    // Answered before any work that depends on the address (whether it has an account): see AccountsService.
    this.accounts.requestReset(email);
    return { title: TITLES['check-email'], email, reset: true };
  }

  @Get('reset/confirm')
  async resetConfirmForm(@Query('token') query: unknown, @Res() response: Response): Promise<void> {
    const token = typeof query === 'string' ? query : '';
    const valid = await this.accounts.resetTokenValid(token);
    renderView(response, 'reset-confirm', { title: TITLES['reset-confirm'], token, failed: !valid }, valid ? 200 : 400);
  }

  /** Throttled per address block (the password check costs a little CPU). A reset lifts the sign-in throttles. */
  @Post('reset/confirm')
  @HttpCode(200)
  @SkipThrottle({ account: true })
  @UseGuards(SignInThrottlerGuard)
  async resetPassword(
    @Body(NewPasswordFormPipe) { token, password }: NewPasswordForm,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const email = await this.accounts.resetPassword(token, password);
    if (email === undefined)
      return renderView(response, 'reset-confirm', { title: TITLES['reset-confirm'], failed: true }, 400);
    await this.attempts.lift(email);
    // The block that proved the mailbox (the mailed link) is the owner's from now on, as a verification's is.
    await this.attempts.remember(email, clientBlock(request));
    setFlash(request, 'success', 'Your password was changed. Sign in with it.');
    await redirectAfterSave(request, response, '/login');
  }

  private keyPendingView(retryAt: Date | undefined): KeyPendingView {
    return { title: TITLES['key-pending'], signedIn: true, ...(retryAt ? { retryAt: retryAt.toISOString() } : {}) };
  }

  /** The session's verified account (with or without a consumer); none: SignInRequired (a 303 to the sign-in page). */
  private async signedInAccount(request: Request): Promise<AccountEntity> {
    const id = request.session?.accountId;
    const account = id ? await this.accounts.find(id) : null;
    if (!account || !account.verifiedAt) throw new SignInRequired();
    return account;
  }
}
