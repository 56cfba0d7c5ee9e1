import type { Request } from 'express';

/** A secret made by a POST, held for the one GET its redirect leads to (Post/Redirect/Get). */
export interface ShownOnce {
  /** The secret itself (an API key, an admin token). */
  secret: string;
  /** What the page needs besides it (the rotated key's hint and end, the token's record). */
  details?: Record<string, unknown>;
}

declare module 'express-session' {
  interface SessionData {
    /** The secret of the last POST that made one, until its page is shown (deleted on that first read). */
    shownOnce?: ShownOnce & { kind: string };
  }
}

/** Holds a secret for the next page of this session; `kind` keeps a token's page from showing a key and back. */
export function holdShownOnce(request: Request, kind: string, shown: ShownOnce): void {
  request.session.shownOnce = { kind, ...shown };
}

/**
 * The held secret of this `kind`, removed from the session as it is read: a reload, the back button or a second tab
 * finds nothing and the page says the secret was shown once.
 */
export function takeShownOnce(request: Request, kind: string): ShownOnce | undefined {
  const held = request.session.shownOnce;
  if (held === undefined || held.kind !== kind) return undefined;
  delete request.session.shownOnce;
  return { secret: held.secret, details: held.details };
}
