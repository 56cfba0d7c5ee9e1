import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';

/** A response header as helmet would set it: name and value, in the order helmet sets them. */
export type HeaderField = readonly [name: string, value: string];

/**
 * helmet's options: its defaults, less the CSP's `upgrade-insecure-requests`. The apps speak plain HTTP (TLS, when
 * there is any, ends in front of them, and moving browsers to https is that terminator's job): with the directive,
 * a browser that opens Swagger UI by a name or address other than localhost fetches its stylesheet and scripts
 * over https, which nothing here answers, and shows a blank page (#22).
 */
const HELMET_OPTIONS = { contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } } as const;

/**
 * helmet's headers (CSP with self-hosted scripts, nosniff, frame denial, HSTS...), computed once. They suit
 * both the API and Swagger UI (whose scripts and styles are served from this origin). helmet builds the same strings
 * on every response through a chain of a dozen middleware; with no per-request directive (no nonce) the result never
 * changes, so it is read off one dry run at start-up and replayed.
 */
export function securityHeaders(): readonly HeaderField[] {
  const fields: HeaderField[] = [];
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => fields.push([name, String(value)]),
    removeHeader: () => undefined,
    getHeader: () => undefined,
  };
  let synchronous = false;
  helmet(HELMET_OPTIONS)({} as never, recorder as never, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error(String(error));
    synchronous = true;
  });
  if (!synchronous) throw new Error('helmet did not set its headers synchronously: they cannot be computed once');
  return Object.freeze(fields);
}

/** Middleware that sets the precomputed security headers on every response. */
export function securityHeadersMiddleware(fields: readonly HeaderField[] = securityHeaders()) {
  return (_request: Request, response: Response, next: NextFunction): void => {
    for (let i = 0; i < fields.length; i += 1) response.setHeader(fields[i][0], fields[i][1]);
    next();
  };
}
