import { Decision, WindowState } from './rate-limit-store';
import { CREDITS_POLICY, CreditState } from '../billing/credits/credit-decision';

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

/**
 * The credits as a policy of the headers: `q` the refill amount (or, without a refill, the balance now: what is
 * left to spend), remaining the balance, reset at the next refill (none without a refill: `resetMs` 0).
 */
export function creditsPolicy(credits: CreditState): WindowState {
  const limit = credits.refill ? Math.max(credits.refill.amount, credits.balance) : credits.balance;
  return {
    name: CREDITS_POLICY,
    limit,
    ttlMs: credits.refill ? credits.refill.periodMs : 0,
    count: limit - credits.balance,
    resetMs: credits.refill ? credits.refill.waitMs : 0,
  };
}

/** Every policy of a decision: its windows, then its credits when they are in force. */
const policiesOf = (decision: Decision): WindowState[] =>
  decision.credits ? [...decision.windows, creditsPolicy(decision.credits)] : decision.windows;

/** The window the X-RateLimit-* headers describe: the limiting one, else the one closest to running out. */
export function reportedWindow(decision: Decision): WindowState {
  const policies = policiesOf(decision);
  if (decision.outcome === 'limited') return policies.find((w) => w.name === decision.window)!;
  if (decision.outcome === 'exhausted') return policies[policies.length - 1];
  return policies.reduce((a, b) => {
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
  if (decision.outcome === 'allowed' || decision.outcome === 'exhausted') return undefined;
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
  const exhausted = decision.outcome === 'exhausted';
  const remaining = waitMs === undefined && !exhausted ? remainingOf(window) : 0;
  // Credits without a refill that covers the cost never come back by waiting: no `t`, and X-RateLimit-Reset is now.
  const resets = !exhausted && (window.name !== CREDITS_POLICY || window.resetMs > 0 || waitMs !== undefined);
  const t = resets ? seconds(waitMs ?? window.resetMs) : 0;
  let policy = '';
  for (const w of decision.windows)
    policy += `${policy ? ', ' : ''}"${w.name}";q=${w.limit};w=${Math.round(w.ttlMs / 1000)}`;
  if (decision.credits) {
    const credits = creditsPolicy(decision.credits);
    // No `qu`: draft-11 §3.1.2 allows only registered units ("requests", "content-bytes", "concurrent-requests"),
    // so the credits policy uses the default, "requests", each request consuming its operation's cost in units.
    policy += `${policy ? ', ' : ''}"${CREDITS_POLICY}";q=${credits.limit}`;
    if (credits.ttlMs > 0) policy += `;w=${Math.round(credits.ttlMs / 1000)}`;
  }
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(window.limit),
    'X-RateLimit-Remaining': String(remaining),
    'X-RateLimit-Reset': String(Math.floor(nowMs / 1000) + t),
    'RateLimit-Policy': policy,
    RateLimit: resets ? `"${window.name}";r=${remaining};t=${t}` : `"${window.name}";r=${remaining}`,
  };
  if (waitMs !== undefined) headers['Retry-After'] = String(t);
  return headers;
}
