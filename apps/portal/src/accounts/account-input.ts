import { PASSWORD_MAX, PASSWORD_MIN } from './passwords';

/** A form's problems, by field: shown next to the field, the typed values kept. */
export type FieldErrors = Partial<Record<string, string>>;

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,185}\.[^\s@]{2,63}$/;

export function normalizeEmail(value: unknown): string {
  return typeof value === 'string' ? value.trim().toLowerCase() : '';
}

export function emailError(email: string): string | undefined {
  if (email === '') return 'Enter your email address.';
  if (email.length > 254 || !EMAIL.test(email)) return 'Enter an email address such as name@example.com.';
  return undefined;
}

/** A length rule and nothing else (NIST SP 800-63B): no composition rules. */
export function passwordError(password: unknown): string | undefined {
  if (typeof password !== 'string' || password.length === 0) return 'Enter a password.';
  if (password.length < PASSWORD_MIN) return `Use at least ${PASSWORD_MIN} characters.`;
  if (password.length > PASSWORD_MAX) return `Use at most ${PASSWORD_MAX} characters.`;
  return undefined;
}
