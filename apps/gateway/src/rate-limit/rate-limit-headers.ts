import { Decision, WindowState } from './rate-limit-store';
import { CREDITS_POLICY, CreditState } from '../credits/credit-decision';

const remainingOf = (window: WindowState) => Math.max(0, window.limit - window.count);
/**
 * A wait of `ms` as the headers' delays (`t`, Retry-After): whole seconds, rounded up, at least 1. Counted from the
 * answer, never early (the client reads it after it was sent); never above the window it counts down (a wait is at
 * most the window's length), so `t` never exceeds the policy's `w`.
 */
const delaySeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
/**
 * The instant `ms` from now as X-RateLimit-Reset: the first Unix second at or after it, never early, and the same
 * second for every answer about one window or one refill (the instant is fixed; only the delay to it shrinks).
 */
const instantSeconds = (nowMs: number, ms: number) => Math.ceil((nowMs + ms) / 1000);
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

/** The policy the RateLimit field describes: the limiting one, else the one closest to running out (credits too). */
export function reportedWindow(decision: Decision): WindowState {
  const policies = policiesOf(decision);
  if (decision.outcome === 'limited') return policies.find((w) => w.name === decision.window)!;
  if (decision.outcome === 'exhausted') return policies[policies.length - 1];
  return nearestExhaustion(policies);
}

/**
 * The window the legacy X-RateLimit-* headers describe: requests per window, as the seed defines them, so never the
 * credits (a balance has no fixed limit, and without a refill no reset): the window a refusal names, else the window
 * closest to running out. Its limit is the window's quota, the same on every answer about it.
 */
export function legacyWindow(decision: Decision): WindowState {
  if (decision.windows.length === 0) return reportedWindow(decision);
  if (decision.outcome === 'limited') {
    const violated = decision.windows.find((w) => w.name === decision.window);
    if (violated) return violated;
  }
  return nearestExhaustion(decision.windows);
}

/** Fewest left; on a tie the one that resets later. */
const nearestExhaustion = (policies: WindowState[]): WindowState =>
  policies.reduce((a, b) => {
    const ra = remainingOf(a);
    const rb = remainingOf(b);
    return rb < ra || (rb === ra && b.resetMs > a.resetMs) ? b : a;
  });

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
 * Headers of a decision (docs/rate-limits.md, "Headers"). The IETF RateLimit field
 * (draft-ietf-httpapi-ratelimit-headers-11) reports the policy nearest exhaustion, credits included (reportedWindow:
 * on a refusal the violated one), with `t` the delay to its reset, never above its `w`; RateLimit-Policy lists every
 * policy in force (`w` is a window's length: for the month, the current billing period's). The seed's
 * X-RateLimit-Limit/Remaining/Reset report a request window (legacyWindow: never the credits): its quota, what is
 * left (0 on every refusal: nothing passes now) and the Unix second of its reset, or on a refusal of the moment a
 * request can pass (the instant Retry-After points at). Retry-After on refusals. Delays are whole seconds rounded up
 * (delaySeconds), instants the first whole second at or after (instantSeconds): neither is ever early, and one
 * window's (or refill's) Reset is the same second on every answer.
 */
export function rateLimitHeaders(decision: Decision, nowMs: number): Record<string, string> {
  const window = reportedWindow(decision);
  const legacy = legacyWindow(decision);
  const waitMs = waitOf(decision);
  const unavailable = decision.outcome === 'unavailable';
  const exhausted = decision.outcome === 'exhausted';
  const refused = waitMs !== undefined || exhausted;
  const remaining = refused ? 0 : remainingOf(window);
  const w = Math.round(window.ttlMs / 1000);
  // `t`: the named policy's reset. None when waiting never brings it back (credits without a refill that covers the
  // cost), and none during a ban: the ban, not that policy, decides when a request passes (Retry-After says when).
  const resets =
    !exhausted && decision.outcome !== 'banned' && (window.name !== CREDITS_POLICY || window.resetMs > 0 || refused);
  const delay = (ms: number) => (unavailable ? hintSeconds(ms) : delaySeconds(ms));
  const t = resets ? Math.min(delay(waitMs ?? window.resetMs), w > 0 ? w : Infinity) : 0;
  const resetAt =
    waitMs === undefined
      ? instantSeconds(nowMs, legacy.resetMs)
      : unavailable
        ? Math.floor(nowMs / 1000) + hintSeconds(waitMs)
        : instantSeconds(nowMs, waitMs);
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
    'X-RateLimit-Limit': String(legacy.limit),
    'X-RateLimit-Remaining': String(refused ? 0 : remainingOf(legacy)),
    'X-RateLimit-Reset': String(resetAt),
    'RateLimit-Policy': policy,
    RateLimit: resets ? `"${window.name}";r=${remaining};t=${t}` : `"${window.name}";r=${remaining}`,
  };
  if (waitMs !== undefined) headers['Retry-After'] = String(delay(waitMs));
  return headers;
}
