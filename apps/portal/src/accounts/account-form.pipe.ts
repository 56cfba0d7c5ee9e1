import { Injectable, PipeTransform } from '@nestjs/common';
import { emailError, FieldErrors, normalizeEmail, passwordError } from '../credentials/account-input';
import { refuseForm, TITLES } from './accounts.views';

/**
 * The account forms' bodies, read and checked by pipes before the handler runs (as a DTO and its ValidationPipe
 * would, with the page's own sentences): a handler gets a typed, valid form or never runs; a refused form is the
 * page again with 400, the errors next to the fields and the email as typed (never a password), rendered by the
 * exception filter (FormRefused). Fields are strings ('' when absent or not a string); only the email is trimmed.
 */
type FormBody = Partial<Record<string, unknown>> | undefined;

const text = (body: unknown, name: string): string => {
  const value = (body as FormBody)?.[name];
  return typeof value === 'string' ? value : '';
};

export interface SignUpForm {
  email: string;
  password: string;
}

@Injectable()
export class SignUpFormPipe implements PipeTransform<unknown, SignUpForm> {
  transform(body: unknown): SignUpForm {
    const email = normalizeEmail((body as FormBody)?.email);
    const password = (body as FormBody)?.password;
    const errors: FieldErrors = { email: emailError(email) };
    errors.password = passwordError(password, errors.email ? '' : email);
    if (errors.email || errors.password)
      throw refuseForm('signup', { title: TITLES.signup, email: text(body, 'email'), errors });
    return { email, password: password as string };
  }
}

export interface ResetForm {
  email: string;
}

@Injectable()
export class ResetFormPipe implements PipeTransform<unknown, ResetForm> {
  transform(body: unknown): ResetForm {
    const email = normalizeEmail((body as FormBody)?.email);
    const error = emailError(email);
    if (error) throw refuseForm('reset', { title: TITLES.reset, email: text(body, 'email'), errors: { email: error } });
    return { email };
  }
}

/** A reset link's new password: the link's token (checked by the service, not here) and a password of the rules. */
export interface NewPasswordForm {
  token: string;
  password: string;
}

@Injectable()
export class NewPasswordFormPipe implements PipeTransform<unknown, NewPasswordForm> {
  transform(body: unknown): NewPasswordForm {
    const token = text(body, 'token');
    const password = (body as FormBody)?.password;
    const error = passwordError(password);
    if (error)
      throw refuseForm('reset-confirm', { title: TITLES['reset-confirm'], token, errors: { password: error } });
    return { token, password: password as string };
  }
}

/** Sign-in: nothing to refuse before the throttles and the password check (which say less than a field error). */
export interface SignInForm {
  email: string;
  /** As typed: the page shown again keeps it. */
  typedEmail: string;
  password: string;
}

@Injectable()
export class SignInFormPipe implements PipeTransform<unknown, SignInForm> {
  transform(body: unknown): SignInForm {
    return {
      email: normalizeEmail((body as FormBody)?.email),
      typedEmail: text(body, 'email'),
      password: text(body, 'password'),
    };
  }
}

/** Verification: the link's token and the sign-up's password, both checked by the service. */
export interface VerifyForm {
  token: string;
  password: string;
}

@Injectable()
export class VerifyFormPipe implements PipeTransform<unknown, VerifyForm> {
  transform(body: unknown): VerifyForm {
    return { token: text(body, 'token'), password: text(body, 'password') };
  }
}
