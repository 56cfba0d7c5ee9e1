import type { PageModel } from '@app/web';
import { typedFormRefusal, typedRender, typedRenderer } from '@app/web';
import type { FieldErrors } from '../credentials/account-input';

export type HomeView = PageModel;

/** The sign-up form; shown again with 400 and the errors next to the fields (never the password). */
export interface SignUpView extends PageModel {
  email?: string;
  errors?: FieldErrors;
  /** A throttle's refusal (429). */
  failed?: string;
}

/** After sign-up and reset: the same answer whether the email has an account or not. */
export interface CheckEmailView extends PageModel {
  email: string;
  reset?: boolean;
}

/** The verification form (the link's token in a hidden field); `failed`: the link is used or expired. */
export interface VerifyView extends PageModel {
  token?: string;
  /** The account the link names (a usable link only): the form's read-only username field. */
  email?: string;
  errors?: FieldErrors;
  failed?: boolean;
}

/** The sign-in form; `failed` says why a sign-in was refused (wrong credentials, a throttle, the consumers cap). */
export interface SignInView extends PageModel {
  email?: string;
  failed?: string;
  /** The page a sign-out leads to: it says the session ended. */
  signedOut?: boolean;
}

/**
 * A verified, signed-in account whose key waits for its address block's hourly cap: when it comes (`retryAt`, an
 * ISO date-time; absent: now) and a button that asks for it.
 */
export interface KeyPendingView extends PageModel {
  retryAt?: string;
  /** The navigation shows the signed-in links (the session may have been made in this very request). */
  signedIn: true;
}

export interface ResetView extends PageModel {
  email?: string;
  errors?: FieldErrors;
  /** A throttle's refusal (429). */
  failed?: string;
}

/** The new-password form of a reset link; `failed`: the link is used or expired. */
export interface ResetConfirmView extends PageModel {
  token?: string;
  errors?: FieldErrors;
  failed?: boolean;
}

/** The portal's account pages and the model each takes: `@Page('login')` checks a handler's answer. */
export interface AccountsViews {
  home: HomeView;
  signup: SignUpView;
  'check-email': CheckEmailView;
  verify: VerifyView;
  login: SignInView;
  'key-pending': KeyPendingView;
  reset: ResetView;
  'reset-confirm': ResetConfirmView;
}

/** Each page's title: the GET that shows a form and the answer that shows it again say the same. */
export const TITLES: { readonly [Name in keyof AccountsViews]: string } = {
  home: 'Welcome',
  signup: 'Create an account',
  'check-email': 'Check your email',
  verify: 'Verify your email',
  login: 'Sign in',
  'key-pending': 'Your API key is on its way',
  reset: 'Reset your password',
  'reset-confirm': 'Choose a new password',
};

export const Page = typedRender<AccountsViews>();
export const renderView = typedRenderer<AccountsViews>();
export const refuseForm = typedFormRefusal<AccountsViews>();
