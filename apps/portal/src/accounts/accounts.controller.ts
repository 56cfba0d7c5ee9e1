import { Body, Controller, Get, HttpCode, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  AdminApiError,
  destroySession,
  holdShownOnce,
  href,
  redirectAfterSave,
  regenerateSession,
  setFlash,
} from '@app/web';
import { SkipThrottle } from '@nestjs/throttler';
import { SignInRequired } from './sign-in-required';
import { developerOf, PortalApi } from '../admin-api/portal-api';
import { clientBlock } from '../throttle/client-address';
import { ConsumerCap } from '../throttle/consumer-cap';
import { SignInAttempts, SignInVerdict } from '../throttle/sign-in-attempts';
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
import { SHOWN_KEY } from './shown-key';
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

/** The sign-in page's refusal for each throttle code (the code chooses, never a message). */
function throttledMessage(verdict: Exclude<SignInVerdict, { allowed: true }>): string {
  if (verdict.code === 'ACCOUNT_DELAY')
    return `Too many failed sign-ins on this account. Wait ${verdict.retryAfterSeconds} second${verdict.retryAfterSeconds === 1 ? '' : 's'} and try again, or reset your password.`;
  const minutes = Math.max(1, Math.ceil(verdict.retryAfterSeconds / 60));
  return `Too many attempts. Wait ${minutes} minute${minutes === 1 ? '' : 's'} and try again, or reset your password.`;
}

type NewConsumer = { code: 'CREATED'; key: string } | { code: 'CAP_REACHED'; retryAt: Date };

/**
 * Sign-up, verification, sign-in, sign-out and password reset: forms that work without script. Each page is a typed
 * view (accounts.views.ts); each form's body is read and checked by its pipe (account-form.pipe.ts) before the
 * handler runs; a page of its own status (400, 401, 429) or a redirect (303, Post/Redirect/Get) is answered by hand.
 */
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
  @Page('check-email')
  signUp(@Body(SignUpFormPipe) form: SignUpForm): CheckEmailView {
    // Answered before any work that depends on the address (whether it has an account): see AccountsService.
    this.accounts.signUp(form.email, form.password);
    return { title: TITLES['check-email'], email: form.email };
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
    const consumer = account.consumerName ? undefined : await this.createConsumer(account, request);
    await regenerateSession(request);
    request.session.accountId = account.id;
    if (!consumer) {
      setFlash(request, 'success', 'Your email is verified.');
      return redirectAfterSave(request, response, '/dashboard');
    }
    await this.showNewConsumer(request, response, consumer);
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
    // Never refused for want of a key: a consumer that cannot be made this hour is signed in and told when it comes.
    const consumer = account.consumerName ? undefined : await this.createConsumer(account, request);
    // A new session id at sign-in: an id planted before (session fixation) is worth nothing after.
    await regenerateSession(request);
    request.session.accountId = account.id;
    if (!consumer) return redirectAfterSave(request, response, '/dashboard');
    await this.showNewConsumer(request, response, consumer);
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
    await this.showNewConsumer(request, response, await this.createConsumer(account, request));
  }

  @Post('logout')
  @HttpCode(200)
  async signOut(@Req() request: Request, @Res() response: Response): Promise<void> {
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

  /**
   * The account's Free consumer, made through the admin API, and its first key, to be shown once; when the request's
   * address block has had this hour's (PORTAL_CONSUMERS_PER_BLOCK_PER_HOUR, all instances), when the next comes.
   */
  private async createConsumer(account: AccountEntity, request: Request): Promise<NewConsumer> {
    const claim = await this.consumerCap.claim(clientBlock(request));
    if (!claim.granted) return { code: 'CAP_REACHED', retryAt: claim.retryAt };
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

  /**
   * Post/Redirect/Get, as every later key: the first key is held in the session for the one page the 303 leads to
   * (/keys/new takes it as it shows it: a reload finds nothing and re-posts nothing), or the 303 leads to /key,
   * which says when it will come. The key is never in the URL.
   */
  private async showNewConsumer(request: Request, response: Response, consumer: NewConsumer): Promise<void> {
    if (consumer.code === 'CAP_REACHED') return redirectAfterSave(request, response, '/key');
    holdShownOnce(request, SHOWN_KEY, { secret: consumer.key, details: { welcome: true } });
    await redirectAfterSave(request, response, '/keys/new');
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
