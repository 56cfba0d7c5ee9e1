import { redirectAfterSave, refusalText, rethrowUnlessRefusal, setFlash } from '@app/web';
import type { RefusalSentences } from '@app/web';
import type { Request, Response } from 'express';

/**
 * A form's change through the admin API, then back to `back` with a message: the success text, or the refusal
 * (400 validation, 403 scope, 404, 409) in the console's words, chosen by its code (`own` first, then libs/web's
 * REFUSALS). A 401 is rethrown (it ends the session).
 */
export async function act(
  request: Request,
  response: Response,
  back: string,
  change: () => Promise<string>,
  own: RefusalSentences = {},
): Promise<void> {
  try {
    setFlash(request, 'success', await change());
  } catch (error) {
    rethrowUnlessRefusal(error);
    setFlash(request, 'error', refusalText(error, own));
  }
  await redirectAfterSave(request, response, back);
}

/** A form field as a string ('' when absent or not a string). */
export function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

/**
 * The perMinute/perDay fields of a limits form: both blank, null (the plan's own limits); otherwise both as numbers,
 * a blank or non-numeric one as NaN, which the admin API refuses with its own message (its DTO is the rule).
 */
export function limitsFrom(body: unknown): { perMinute: number; perDay: number } | null {
  const perMinute = field(body, 'perMinute');
  const perDay = field(body, 'perDay');
  return perMinute === '' && perDay === ''
    ? null
    : { perMinute: Number(perMinute || NaN), perDay: Number(perDay || NaN) };
}

/** A path segment of the console's own addresses (a consumer's name, an id): links, form actions, redirects. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}
