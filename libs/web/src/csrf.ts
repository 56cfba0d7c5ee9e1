import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { doubleCsrf } from 'csrf-csrf';
import { hasStoredSession } from './sessions';

export const CSRF_FIELD = '_csrf';

export interface CsrfOptions {
  secret: string | string[];
  /** https public address: the cookie is Secure and takes the __Host- prefix. */
  secure: boolean;
  /** Cookie name stem; each app its own. */
  cookieName: string;
}

/**
 * CSRF by double submit (csrf-csrf): a signed token sits in a cookie and in a hidden field of every form
 * (`{{> csrf}}`); every POST (PUT, PATCH, DELETE) must carry both, equal and signed, or gets a 403 page. The token
 * is bound to the stored session's id when there is one (signed in: a token of another session, or of a session
 * that ended, is refused), else to a random visitor id in a cookie of its own: an anonymous form (sign-in, sign-up)
 * needs no stored session, so viewing a form stores nothing server-side (express-session's saveUninitialized is
 * false). `res.locals.csrfToken` is lazy: only a page that renders a form issues a token.
 */
export function csrfProtection(options: CsrfOptions) {
  const visitorCookie = `${options.secure ? '__Host-' : ''}${options.cookieName}-visitor`;
  const cookieOptions = { sameSite: 'lax' as const, secure: options.secure, httpOnly: true, path: '/' };
  /** Visitor ids issued during a request (its cookie is only in the next request's header). */
  const issued = new WeakMap<Request, string>();
  const visitorOf = (request: Request): string => {
    const fromCookie = (request.cookies as Record<string, unknown> | undefined)?.[visitorCookie];
    return (
      issued.get(request) ??
      (typeof fromCookie === 'string' && /^[A-Za-z0-9_-]{22}$/.test(fromCookie) ? fromCookie : '')
    );
  };
  const { generateCsrfToken, validateRequest } = doubleCsrf({
    getSecret: () => options.secret,
    getSessionIdentifier: (request) =>
      hasStoredSession(request) ? `session:${request.sessionID}` : `visitor:${visitorOf(request)}`,
    cookieName: options.secure ? `__Host-${options.cookieName}` : options.cookieName,
    cookieOptions,
    getCsrfTokenFromRequest: (request) => {
      const body = request.body as Record<string, unknown> | undefined;
      const field = body?.[CSRF_FIELD];
      return typeof field === 'string' ? field : request.headers['x-csrf-token'];
    },
  });
  return (request: Request, response: Response, next: NextFunction): void => {
    let token: string | undefined;
    response.locals.csrfToken = () => {
      if (token === undefined) {
        if (!hasStoredSession(request) && visitorOf(request) === '') {
          const visitor = randomBytes(16).toString('base64url');
          issued.set(request, visitor);
          response.cookie(visitorCookie, visitor, cookieOptions);
        }
        token = generateCsrfToken(request, response);
      }
      return token;
    };
    if (
      request.method === 'GET' ||
      request.method === 'HEAD' ||
      request.method === 'OPTIONS' ||
      validateRequest(request)
    )
      return next();
    response.status(403).render('csrf-refused', { title: 'Form expired' });
  };
}
