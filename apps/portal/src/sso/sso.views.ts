import type { PageModel } from '@app/web';
import { typedRenderer } from '@app/web';
import type { FieldErrors } from '../credentials/account-input';

/** A provider sign-in that did not sign anyone in: its heading and sentence, chosen by the case. */
export interface SignInProblemView extends PageModel {
  message: string;
  /** Where the page leads back to; absent: the sign-in page. */
  back?: { href: string; text: string };
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

/** One linked identity on the sign-in methods page. */
export interface LinkedIdentityRow {
  id: string;
  /** The configured provider's name; its issuer when it is no longer configured. */
  provider: string;
  /** The email the provider asserted when it was linked. */
  email: string;
  linkedAt: string;
  /** Its confirmation page; absent when unlinking it is refused (`keptBecause` says why). */
  unlinkHref?: string;
  keptBecause?: string;
}

/**
 * The account's ways in (docs/sso.md, "Sign-in methods"): its password (`set`; `none`: one can be set through a
 * mailed link; `provider-only`: its domain must use `requiredProvider`) and its linked identities.
 */
export interface SignInMethodsView extends PageModel {
  email: string;
  password: 'set' | 'none' | 'provider-only';
  requiredProvider?: string;
  identities: LinkedIdentityRow[];
  /** The configured providers not linked yet: a "Link <name>" form each. */
  linkable: Array<{ name: string; action: string }>;
  /** Whether the providers' section shows: a provider is configured, or an identity is linked (from one since removed). */
  providers: boolean;
  /** Why an unlink was refused (409), or a link could not start (503). */
  failed?: string;
}

export interface UnlinkIdentityView extends PageModel {
  provider: string;
  email: string;
  action: string;
}

export interface SsoViews {
  'sign-in-problem': SignInProblemView;
  'link-account': LinkAccountView;
  'link-confirm': LinkConfirmView;
  'sign-in-methods': SignInMethodsView;
  'unlink-identity': UnlinkIdentityView;
}

export const renderSsoView = typedRenderer<SsoViews>();
