import type { PageModel } from '@app/web';
import { typedRenderer } from '@app/web';
import type { FieldErrors } from '../credentials/account-input';

/** A provider sign-in that did not sign anyone in: its heading and sentence, chosen by the case. */
export interface SignInProblemView extends PageModel {
  message: string;
}

/**
 * An existing account has the provider's email and not its identity: prove it is yours (its password, or a mailed
 * link) to link them. `mailed`: the link was sent.
 */
export interface LinkAccountView extends PageModel {
  email: string;
  provider: string;
  errors?: FieldErrors;
  /** A throttle's refusal (429). */
  failed?: string;
  mailed?: boolean;
}

/** The mailed link's page: a button (a POST: a mail scanner that opens links links nothing), or why it cannot. */
export interface LinkConfirmView extends PageModel {
  token?: string;
  email?: string;
  provider?: string;
  /** Why the link cannot be used here. */
  failed?: string;
}

export interface SsoViews {
  'sign-in-problem': SignInProblemView;
  'link-account': LinkAccountView;
  'link-confirm': LinkConfirmView;
}

export const renderSsoView = typedRenderer<SsoViews>();
