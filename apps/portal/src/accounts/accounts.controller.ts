import { Body, Controller, Get, HttpCode, Post, Query, Render, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  AdminApiError,
  destroySession,
  href,
  redirectAfterSave,
  regenerateSession,
  saveSession,
  setFlash,
} from '@app/web';
import { SkipThrottle } from '@nestjs/throttler';
import { developerOf, PortalApi } from '../dashboard/portal-api.service';
import { clientBlock } from '../throttle/client-address';
import { ConsumerCap } from '../throttle/consumer-cap';
import { SignInAttempts, SignInVerdict } from '../throttle/sign-in-attempts';
import { SignInThrottlerGuard } from '../throttle/sign-in-throttler.guard';
import { ThrottledFormFilter } from '../throttle/throttled-form.filter';
import { emailError, FieldErrors, normalizeEmail, passwordError } from '../credentials/account-input';
import { AccountEntity } from './account.entity';
import { AccountsService } from './accounts.service';

type Form = Record<string, unknown>;

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const SIGN_IN_FAILED = 'Wrong email or password, or the email is not verified yet.';
const CAP_REACHED =
  'Your email is verified, but the portal has handed out as many new API keys as it may this hour. Sign in again later to get yours.';
const WRONG_PASSWORD = 'Enter the password you chose when you signed up (this link stays valid until it is used).';

/** The sign-in page's refusal for each throttle code (the code chooses, never a message). */
function throttledMessage(verdict: Exclude<SignInVerdict, { allowed: true }>): string {
  if (verdict.code === 'ACCOUNT_DELAY')
    return `Too many failed sign-ins on this account. Wait ${verdict.retryAfterSeconds} second${verdict.retryAfterSeconds === 1 ? '' : 's'} and try again, or reset your password.`;
  const minutes = Math.max(1, Math.ceil(verdict.retryAfterSeconds / 60));
  return `Too many attempts. Wait ${minutes} minute${minutes === 1 ? '' : 's'} and try again, or reset your password.`;
}

type NewConsumer = { code: 'CREATED'; key: string } | { code: 'CAP_REACHED' };

/** Sign-up, verification, sign-in, sign-out and password reset: forms that work without script. */
@Controller()
export class AccountsController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly api: PortalApi,
    private readonly attempts: SignInAttempts,
    private readonly consumerCap: ConsumerCap,
  ) {}

  @Get()
  home(@Req() request: Request, @Res() response: Response): void {
    if (request.session?.accountId) return response.redirect(303, href(String(response.locals.base), '/dashboard'));
    response.render('home', { title: 'Welcome' });
  }

  @Get('signup')
  @Render('signup')
  signUpForm() {
    return { title: 'Create an account' };
  }

  @Post('signup')
  @HttpCode(200)
  @UseGuards(SignInThrottlerGuard)
  @UseFilters(ThrottledFormFilter)
  async signUp(@Body() body: Form, @Res() response: Response): Promise<void> {
    const email = normalizeEmail(body.email);
    const password = body.password;
    const errors: FieldErrors = { email: emailError(email) };
    errors.password = passwordError(password, errors.email ? '' : email);
    if (errors.email || errors.password) {
      response.status(400).render('signup', { title: 'Create an account', email: str(body.email), errors });
      return;
    }
    // Answered before any work that depends on the address (whether it has an account): see AccountsService.
    this.accounts.signUp(email, password as string);
    response.render('check-email', { title: 'Check your email', email });
  }

  @Get('verify')
  @Render('verify')
  verifyForm(@Query('token') token: unknown) {
    return { title: 'Verify your email', token: str(token) };
  }

  /**
   * A form, not the link itself: mail scanners that open links must not use the token (nor see the key). It asks
   * for the sign-up's password: only whoever holds both the mailbox and the password verifies the account.
   */
  @Post('verify')
  @HttpCode(200)
  async verify(@Body() body: Form, @Req() request: Request, @Res() response: Response): Promise<void> {
    const token = str(body.token);
    const outcome = await this.accounts.verify(token, str(body.password));
    if (outcome.code === 'LINK_INVALID') {
      response.status(400).render('verify', { title: 'Verify your email', failed: true });
      return;
    }
    if (outcome.code === 'WRONG_PASSWORD') {
      response
        .status(400)
        .render('verify', { title: 'Verify your email', token, errors: { password: WRONG_PASSWORD } });
      return;
    }
    const account = outcome.account;
    const consumer = account.consumerName ? undefined : await this.createConsumer(account, request);
    if (consumer?.code === 'CAP_REACHED') return this.capReached(response, account);
    await regenerateSession(request);
    request.session.accountId = account.id;
    if (!consumer) {
      setFlash(request, 'success', 'Your email is verified.');
      return redirectAfterSave(request, response, '/dashboard');
    }
    await saveSession(request);
    response.render('new-key', { title: 'Your API key', key: consumer.key, welcome: true, signedIn: true });
  }

  @Get('login')
  @Render('login')
  signInForm() {
    return { title: 'Sign in' };
  }

  /** Per address block (the guard), then per (account, address block) pair and per account (SignInAttempts). */
  @Post('login')
  @HttpCode(200)
  @SkipThrottle({ account: true })
  @UseGuards(SignInThrottlerGuard)
  @UseFilters(ThrottledFormFilter)
  async signIn(@Body() body: Form, @Req() request: Request, @Res() response: Response): Promise<void> {
    const email = normalizeEmail(body.email);
    const block = clientBlock(request);
    const verdict = await this.attempts.admit(email, block);
    if (!verdict.allowed) {
      response
        .status(429)
        .render('login', { title: 'Sign in', email: str(body.email), failed: throttledMessage(verdict) });
      return;
    }
    const account = await this.accounts.signIn(email, str(body.password));
    if (!account || !account.verifiedAt) {
      await this.attempts.failed(email, block);
      response.status(401).render('login', { title: 'Sign in', email: str(body.email), failed: SIGN_IN_FAILED });
      return;
    }
    await this.attempts.succeeded(email, block);
    const consumer = account.consumerName ? undefined : await this.createConsumer(account, request);
    if (consumer?.code === 'CAP_REACHED') return this.capReached(response, account);
    // A new session id at sign-in: an id planted before (session fixation) is worth nothing after.
    await regenerateSession(request);
    request.session.accountId = account.id;
    if (!consumer) return redirectAfterSave(request, response, '/dashboard');
    await saveSession(request);
    response.render('new-key', { title: 'Your API key', key: consumer.key, welcome: true, signedIn: true });
  }

  @Post('logout')
  @HttpCode(200)
  async signOut(@Req() request: Request, @Res() response: Response): Promise<void> {
    await destroySession(request);
    response.clearCookie('portal.sid', { path: String(response.locals.base) || '/' });
    response.redirect(303, href(String(response.locals.base), '/login'));
  }

  @Get('reset')
  @Render('reset')
  resetForm() {
    return { title: 'Reset your password' };
  }

  @Post('reset')
  @HttpCode(200)
  @UseGuards(SignInThrottlerGuard)
  @UseFilters(ThrottledFormFilter)
  async requestReset(@Body() body: Form, @Res() response: Response): Promise<void> {
    const email = normalizeEmail(body.email);
    const error = emailError(email);
    if (error) {
      response
        .status(400)
        .render('reset', { title: 'Reset your password', email: str(body.email), errors: { email: error } });
      return;
    }
    // Answered before any work that depends on the address (whether it has an account): see AccountsService.
    this.accounts.requestReset(email);
    response.render('check-email', { title: 'Check your email', email, reset: true });
  }

  @Get('reset/confirm')
  async resetConfirmForm(@Query('token') token: unknown, @Res() response: Response): Promise<void> {
    const valid = await this.accounts.resetTokenValid(str(token));
    response
      .status(valid ? 200 : 400)
      .render('reset-confirm', { title: 'Choose a new password', token: str(token), failed: !valid });
  }

  /** Throttled per address block (the password check costs a little CPU). A reset lifts the sign-in throttles. */
  @Post('reset/confirm')
  @HttpCode(200)
  @SkipThrottle({ account: true })
  @UseGuards(SignInThrottlerGuard)
  async resetPassword(@Body() body: Form, @Req() request: Request, @Res() response: Response): Promise<void> {
    const token = str(body.token);
    const error = passwordError(body.password);
    if (error) {
      response
        .status(400)
        .render('reset-confirm', { title: 'Choose a new password', token, errors: { password: error } });
      return;
    }
    const email = await this.accounts.resetPassword(token, body.password as string);
    if (email === undefined) {
      response.status(400).render('reset-confirm', { title: 'Choose a new password', failed: true });
      return;
    }
    await this.attempts.lift(email);
    setFlash(request, 'success', 'Your password was changed. Sign in with it.');
    await redirectAfterSave(request, response, '/login');
  }

  /**
   * The account's Free consumer, made through the admin API, and its first key, to be shown once; nothing when this
   * hour's consumers (PORTAL_CONSUMERS_PER_HOUR, all instances) are all taken.
   */
  private async createConsumer(account: AccountEntity, request: Request): Promise<NewConsumer> {
    if (!(await this.consumerCap.claim())) return { code: 'CAP_REACHED' };
    const name = `portal-${account.id.replace(/-/g, '').slice(0, 16)}`;
    const by = developerOf(account, request);
    let key: string;
    try {
      key = (await this.api.createConsumer(by, name)).key.key;
    } catch (error) {
      // Made by an earlier attempt whose answer was lost: the portal created it, so it may issue a key of it.
      if (!(error instanceof AdminApiError && error.code === 'CONSUMER_EXISTS')) throw error;
      key = (await this.api.issueKey(by, name)).key;
    }
    await this.accounts.setConsumer(account.id, name);
    return { code: 'CREATED', key };
  }

  /** Verified (or signed in), but no consumer this hour: not signed in (no page of theirs works without one). */
  private capReached(response: Response, account: AccountEntity): void {
    response.status(429).render('login', { title: 'Sign in', email: account.email, failed: CAP_REACHED });
  }
}
