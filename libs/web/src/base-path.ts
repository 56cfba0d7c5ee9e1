import type { NextFunction, Request, Response } from 'express';

/**
 * An app mounted under a prefix (the portal at /portal behind nginx): `normalizeBasePath` turns the setting into
 * '' or '/prefix' (no trailing slash), and `href` joins it to an app path, so every link and form action carries it.
 */
export function normalizeBasePath(value: string | undefined): string {
  const trimmed = (value ?? '').trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!/^\/[A-Za-z0-9._~\-/]*$/.test(trimmed))
    throw new Error(`a base path is a URL path such as /portal, not "${value}"`);
  return trimmed;
}

export function href(basePath: string, appPath: string): string {
  const rooted = appPath.startsWith('/') ? appPath : `/${appPath}`;
  if (basePath === '') return rooted;
  return rooted === '/' ? `${basePath}/` : `${basePath}${rooted}`;
}

/**
 * Accepts requests with or without the prefix: a proxy that strips it (proxy_pass http://app/) and one that keeps it
 * both reach the same routes. The prefix is removed before routing; pages build their links with `href`.
 */
export function stripBasePath(basePath: string) {
  return (request: Request, _response: Response, next: NextFunction): void => {
    if (
      basePath !== '' &&
      (request.url === basePath || request.url.startsWith(`${basePath}/`) || request.url.startsWith(`${basePath}?`))
    ) {
      const rest = request.url.slice(basePath.length);
      request.url = rest.startsWith('/') ? rest : `/${rest}`;
    }
    next();
  };
}
