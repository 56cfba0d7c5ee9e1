import { Decision, WindowState } from './rate-limit-store';

const remainingOf = (window: WindowState) => Math.max(0, window.limit - window.count);
/**
 * Whole seconds from the current Unix second (`floor(now)`, what a client reads off its clock) to the first
 * Unix second at or after `now + ms`: at least 1. X-RateLimit-Reset is that current second plus this, and
 * Retry-After and every `t` are this, so Reset = now + Retry-After exactly and neither is ever early.
 */
const secondsUntil = (nowMs: number, ms: number) =>
  Math.max(1, Math.ceil((nowMs + ms) / 1000) - Math.floor(nowMs / 1000));
/** A 503's wait is a back-off hint in whole seconds (1 for a late Redis, 5 fail-closed), no moment to pass: as it is. */
const hintSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** The window the X-RateLimit-* headers describe: the limiting one, else the one closest to running out. */
export function reportedWindow(decision: Decision): WindowState {
  if (decision.outcome === 'limited') return decision.windows.find((w) => w.name === decision.window)!;
  return decision.windows.reduce((a, b) => {
    const ra = remainingOf(a);
    const rb = remainingOf(b);
    return rb < ra || (rb === ra && b.resetMs > a.resetMs) ? b : a;
  });
}

/**
 * How long a refused client must wait before a request can be admitted: the limiting window's reset; during a
 * ban, the rest of the ban or, if later, the reset of every spent window; for a 503, its Retry-After.
 */
export function waitOf(decision: Decision): number | undefined {
  if (decision.outcome === 'allowed') return undefined;
  if (decision.outcome !== 'banned') return decision.retryAfterMs;
  const spent = decision.windows.filter((w) => w.count >= w.limit).map((w) => w.resetMs);
  return Math.max(decision.retryAfterMs, ...spent);
}

/**
 * Headers of a decision, all about the same policy where they name one: the spec's X-RateLimit-Limit/Remaining/Reset
 * (Reset in Unix seconds) and the IETF RateLimit field (draft-ietf-httpapi-ratelimit-headers-11) report the policy
 * nearest exhaustion (reportedWindow: on a refusal the violated one); RateLimit-Policy lists every policy in force
 * (`w` is a window's length: for the month, the current billing period's); Retry-After on refusals. They tell one
 * story in every state, from one computation (secondsUntil): Reset is now (Unix seconds) + RateLimit's `t`; when
 * refused, Remaining is 0 and RateLimit says r=0 with t=Retry-After (during a ban or a 503 too, since nothing can
 * pass before then).
 */
export function rateLimitHeaders(decision: Decision, nowMs: number): Record<string, string> {
  const window = reportedWindow(decision);
  const waitMs = waitOf(decision);
  const seconds = (ms: number) => (decision.outcome === 'unavailable' ? hintSeconds(ms) : secondsUntil(nowMs, ms));
  const remaining = waitMs === undefined ? remainingOf(window) : 0;
  const t = seconds(waitMs ?? window.resetMs);
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(window.limit),
    'X-RateLimit-Remaining': String(remaining),
    'X-RateLimit-Reset': String(Math.floor(nowMs / 1000) + t),
    'RateLimit-Policy': decision.windows
      .map((w) => `"${w.name}";q=${w.limit};w=${Math.round(w.ttlMs / 1000)}`)
      .join(', '),
    RateLimit: `"${window.name}";r=${remaining};t=${t}`,
  };
  if (waitMs !== undefined) headers['Retry-After'] = String(t);
  return headers;
}
