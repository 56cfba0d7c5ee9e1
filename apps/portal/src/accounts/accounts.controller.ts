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
import { PortalApi } from '../dashboard/portal-api.service';
import { SignInThrottlerGuard } from '../throttle/sign-in-throttler.guard';
import { ThrottledFormFilter } from '../throttle/throttled-form.filter';
import { emailError, FieldErrors, normalizeEmail, passwordError } from './account-input';
import { AccountEntity } from './account.entity';
import { AccountsService } from './accounts.service';

type Form = Record<string, unknown>;

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const SIGN_IN_FAILED = 'Wrong email or password, or the email is not verified yet.';

/** Sign-up, verification, sign-in, sign-out and password reset: forms that work without script. */
@Controller()
export class AccountsController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly api: PortalApi,
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
    const errors: FieldErrors = { email: emailError(email), password: passwordError(password) };
    if (errors.email || errors.password) {
      response.status(400).render('signup', { title: 'Create an account', email: str(body.email), errors });
      return;
    }
    await this.accounts.signUp(email, password as string);
    response.render('check-email', { title: 'Check your email', email });
  }

  @Get('verify')
  @Render('verify')
  verifyForm(@Query('token') token: unknown) {
    return { title: 'Verify your email', token: str(token) };
  }

  /** A button, not the link itself: mail scanners that open links must not use the token (nor see the key). */
  @Post('verify')
  @HttpCode(200)
  async verify(@Body() body: Form, @Req() request: Request, @Res() response: Response): Promise<void> {
    const account = await this.accounts.verify(str(body.token));
    if (!account) {
      response.status(400).render('verify', { title: 'Verify your email', failed: true });
      return;
    }
    const key = account.consumerName ? undefined : await this.createConsumer(account);
    await regenerateSession(request);
    request.session.accountId = account.id;
    if (!key) {
      setFlash(request, 'success', 'Your email is verified.');
      return redirectAfterSave(request, response, '/dashboard');
    }
    await saveSession(request);
    response.render('new-key', { title: 'Your API key', key, welcome: true, signedIn: true });
  }

  @Get('login')
  @Render('login')
  signInForm() {
    return { title: 'Sign in' };
  }

  @Post('login')
  @HttpCode(200)
  @UseGuards(SignInThrottlerGuard)
  @UseFilters(ThrottledFormFilter)
  async signIn(@Body() body: Form, @Req() request: Request, @Res() response: Response): Promise<void> {
    const email = normalizeEmail(body.email);
    const account = await this.accounts.signIn(email, str(body.password));
    if (!account || !account.verifiedAt) {
      response.status(401).render('login', { title: 'Sign in', email: str(body.email), failed: SIGN_IN_FAILED });
      return;
    }
    // A new session id at sign-in: an id planted before (session fixation) is worth nothing after.
    await regenerateSession(request);
    request.session.accountId = account.id;
    let key: string | undefined;
    if (!account.consumerName) key = await this.createConsumer(account);
    if (!key) return redirectAfterSave(request, response, '/dashboard');
    await saveSession(request);
    response.render('new-key', { title: 'Your API key', key, welcome: true, signedIn: true });
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
    await this.accounts.requestReset(email);
    response.render('check-email', { title: 'Check your email', email, reset: true });
  }

  @Get('reset/confirm')
  async resetConfirmForm(@Query('token') token: unknown, @Res() response: Response): Promise<void> {
    const valid = await this.accounts.resetTokenValid(str(token));
    response
      .status(valid ? 200 : 400)
      .render('reset-confirm', { title: 'Choose a new password', token: str(token), failed: !valid });
  }

  @Post('reset/confirm')
  @HttpCode(200)
  async resetPassword(@Body() body: Form, @Req() request: Request, @Res() response: Response): Promise<void> {
    const token = str(body.token);
    const error = passwordError(body.password);
    if (error) {
      response
        .status(400)
        .render('reset-confirm', { title: 'Choose a new password', token, errors: { password: error } });
      return;
    }
    if (!(await this.accounts.resetPassword(token, body.password as string))) {
      response.status(400).render('reset-confirm', { title: 'Choose a new password', failed: true });
      return;
    }
    setFlash(request, 'success', 'Your password was changed. Sign in with it.');
    await redirectAfterSave(request, response, '/login');
  }

  /** The account's Free consumer, made through the admin API; its first key, to be shown once. */
  private async createConsumer(account: AccountEntity): Promise<string> {
    const name = `portal-${account.id.replace(/-/g, '').slice(0, 16)}`;
    let key: string;
    try {
      key = (await this.api.createConsumer(name, account.email)).key.key;
    } catch (error) {
      // Made by an earlier attempt whose answer was lost: the portal created it, so it may issue a key of it.
      if (!(error instanceof AdminApiError && error.code === 'CONSUMER_EXISTS')) throw error;
      key = (await this.api.issueKey(name)).key;
    }
    await this.accounts.setConsumer(account.id, name);
    return key;
  }
}
