import type { NextFunction, Request, Response } from 'express';
import { doubleCsrf } from 'csrf-csrf';

export const CSRF_FIELD = '_csrf';

export interface CsrfOptions {
  secret: string | string[];
  /** https public address: the cookie is Secure and takes the __Host- prefix. */
  secure: boolean;
  /** Cookie name stem; each app its own. */
  cookieName: string;
}

/**
 * CSRF by double submit (csrf-csrf): a token bound to the session id sits in a cookie and in a hidden field of every
 * form (`{{> csrf}}`); every POST (PUT, PATCH, DELETE) must carry both, equal and signed, or gets a 403 page.
 * `res.locals.csrfToken` is lazy: only a page that renders a form issues a token (and so starts a session).
 */
export function csrfProtection(options: CsrfOptions) {
  const { generateCsrfToken, validateRequest } = doubleCsrf({
    getSecret: () => options.secret,
    getSessionIdentifier: (request) => request.sessionID ?? '',
    cookieName: options.secure ? `__Host-${options.cookieName}` : options.cookieName,
    cookieOptions: { sameSite: 'lax', secure: options.secure, httpOnly: true, path: '/' },
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
        // The session must be stored for its id (which the token is bound to) to outlive this request.
        if (request.session && request.session.startedAt === undefined) request.session.startedAt = Date.now();
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
