import { PASSWORD_MAX, PASSWORD_MIN } from './passwords';
import { weakPasswordReason } from './password-strength';

/** A form's problems, by field: shown next to the field, the typed values kept. */
export type FieldErrors = Partial<Record<string, string>>;

/** RFC 5322 atext: the characters of a dot-atom (no quotes, spaces, commas, angle brackets or control characters). */
const ATEXT = "A-Za-z0-9!#$%&'*+/=?^_`{|}~-";
const LOCAL_PART = new RegExp(`^[${ATEXT}]{1,64}(?:\\.[${ATEXT}]{1,64})*$`);
/** Host names of letters, digits and hyphens, a top-level name of letters (no address literals, no IDN U-labels). */
const DOMAIN = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

/** The typed address without surrounding spaces or tabs, lower-cased. Nothing else is removed or changed. */
export function normalizeEmail(value: unknown): string {
  return typeof value === 'string' ? value.replace(/^[ \t]+|[ \t]+$/g, '').toLowerCase() : '';
}

/**
 * One addr-spec and nothing else: `local@domain`, the local part a dot-atom, the domain a host name. A display
 * name, a list (`a,b@c`), a quoted local part, a comment, whitespace or a control character inside is refused,
 * so that the address a mail goes to is exactly the one typed (mail headers and SMTP commands see one address).
 */
export function isSingleAddress(email: string): boolean {
  if (email.length > 254) return false;
  const at = email.lastIndexOf('@');
  if (at <= 0) return false;
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  return local.length <= 64 && LOCAL_PART.test(local) && domain.length <= 253 && DOMAIN.test(domain);
}

export function emailError(email: string): string | undefined {
  if (email === '') return 'Enter your email address.';
  if (!isSingleAddress(email)) return 'Enter an email address such as name@example.com.';
  return undefined;
}

const WEAK_PASSWORD: Record<NonNullable<ReturnType<typeof weakPasswordReason>>, string> = {
  BLANK: 'Use more than spaces: a long phrase of words is a good password.',
  COMMON: 'This password is one of the most common ones (found in breaches). Choose another: a phrase of words works.',
  GUESSABLE: 'This password is too easy to guess. Add words or make it a phrase of your own.',
};

/**
 * A new password (sign-up, reset): 12 to 128 characters (NIST SP 800-63B: a length rule, no composition rules),
 * neither blank nor one of the common passwords, nor too easy to guess (password-strength.ts).
 */
export function passwordError(password: unknown, email = ''): string | undefined {
  if (typeof password !== 'string' || password.length === 0) return 'Enter a password.';
  if (password.length < PASSWORD_MIN) return `Use at least ${PASSWORD_MIN} characters.`;
  if (password.length > PASSWORD_MAX) return `Use at most ${PASSWORD_MAX} characters.`;
  const weak = weakPasswordReason(password, email ? [email, email.split('@')[0]] : []);
  return weak && WEAK_PASSWORD[weak];
}
