import { AdminApiError, refusalText } from '@app/web';
import type { RefusalSentences } from '@app/web';

/**
 * A part of a page that could not be read: why, in the console's words, so the rest of the page still shows.
 * `forbidden`: the token may not read it, so the page leaves the panel out (heading included) rather than
 * showing a refusal the operator can do nothing about.
 */
export interface Unavailable {
  unavailable: string;
  forbidden: boolean;
}

/** Why a panel is not shown, by the refusal's code (the admin API's message never reaches the page). */
const PANEL_REFUSALS: RefusalSentences = {
  FORBIDDEN: "your token's scopes do not cover it.",
  NOT_FOUND: 'this admin API does not offer it.',
  VALIDATION_FAILED: 'the admin API did not accept the question.',
};

/**
 * One section of a page: its data, or why the admin API refused it (403 for a scope the token lacks: the page
 * leaves the panel out; 404 for a route this admin API does not have). A 401 is never swallowed: it ends the session (ConsoleExceptionFilter).
 * `allowed` false (the token's scopes cannot read it, `Abilities`): not asked at all, so a narrow token's every
 * page view does not write a refusal into the audit log.
 */
export async function section<T>(read: () => Promise<T>, allowed = true): Promise<T | Unavailable> {
  if (!allowed) return { unavailable: PANEL_REFUSALS.FORBIDDEN!, forbidden: true };
  try {
    return await read();
  } catch (error) {
    if (error instanceof AdminApiError && error.status !== 401)
      return { unavailable: refusalText(error, PANEL_REFUSALS), forbidden: error.code === 'FORBIDDEN' };
    throw error;
  }
}

export function isUnavailable(value: unknown): value is Unavailable {
  return typeof value === 'object' && value !== null && 'unavailable' in value;
}

/** UTC ISO of the start of the current hour minus `hours`. */
export function hoursAgo(hours: number, now = Date.now()): string {
  const start = Math.floor(now / 3_600_000) * 3_600_000 - hours * 3_600_000;
  return new Date(start).toISOString().replace('.000Z', 'Z');
}

/** UTC date (YYYY-MM-DD) `days` before today. */
export function daysAgo(days: number, now = Date.now()): string {
  return new Date(Math.floor(now / 86_400_000) * 86_400_000 - days * 86_400_000).toISOString().slice(0, 10);
}
