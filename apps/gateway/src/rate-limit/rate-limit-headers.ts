import { Decision, WindowState } from './rate-limit-store';

const remainingOf = (window: WindowState) => Math.max(0, window.limit - window.count);
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

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
 * Headers of a decision: the spec's X-RateLimit-Limit/Remaining/Reset (Reset in Unix seconds), the IETF
 * RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers) for every window, and
 * Retry-After on refusals.
 */
export function rateLimitHeaders(decision: Decision, nowMs: number): Record<string, string> {
  const refused = decision.outcome !== 'allowed';
  const window = reportedWindow(decision);
  const resetMs = decision.outcome === 'banned' ? Math.max(decision.retryAfterMs, window.resetMs) : window.resetMs;
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(window.limit),
    'X-RateLimit-Remaining': String(refused ? 0 : remainingOf(window)),
    'X-RateLimit-Reset': String(Math.ceil((nowMs + resetMs) / 1000)),
    'RateLimit-Policy': decision.windows.map((w) => `"${w.name}";q=${w.limit};w=${Math.round(w.ttlMs / 1000)}`).join(', '),
    RateLimit: decision.windows.map((w) => `"${w.name}";r=${refused && w === window ? 0 : remainingOf(w)};t=${seconds(w.resetMs)}`).join(', '),
  };
  if (refused) headers['Retry-After'] = String(seconds(decision.retryAfterMs));
  return headers;
}
