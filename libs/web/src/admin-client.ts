import { Logger } from '@nestjs/common';

const adminClientLogger = new Logger('AdminClient');

/** The admin API's Error body, as a page shows it: what went wrong, in the API's own words. */
export class AdminApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'AdminApiError';
  }
}

export type QueryValue = string | number | boolean | undefined | null;

export interface AdminRequest extends AdminEndUser {
  query?: Record<string, QueryValue | readonly string[]>;
  body?: unknown;
}

/**
 * The person behind a call (docs/admin-tokens.md, "Acting for users"): sent as X-On-Behalf-Of and
 * X-End-User-Address, recorded in the audit log. Only a token created with `actsForUsers` (or root) may send them.
 */
export interface AdminEndUser {
  /** An opaque label: `account:<id> <email>` (the portal), `operator:<name>` (the console). */
  onBehalfOf?: string;
  /** Their address as the web app saw it (an IPv4 or IPv6 address). */
  endUserAddress?: string;
}

/** A header carries printable ASCII: anything else is percent-encoded, so the label reaches the audit readable. */
export function headerText(value: string): string {
  return value.replace(/[^\x20-\x7e]/gu, (character) => encodeURIComponent(character));
}

export interface AdminClientOptions {
  /** The admin API's address, e.g. http://127.0.0.1:3002 (ADMIN_URL). */
  baseUrl: string;
  /** Per call; past it the call fails with 504 ADMIN_TIMEOUT. Default 10 s. */
  timeoutMs?: number;
}

/** The admin API's Error body (`{code, message, status}`), told apart from anything else a proxy might answer. */
export function isErrorBody(value: unknown): value is { code: string; message: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

/**
 * A small client of the admin API over fetch (undici). The bearer token is given on every call: the console passes
 * the signed-in operator's token, the portal its own. Any answer other than 2xx becomes an AdminApiError with the
 * API's status, code and message; an unreachable API 503 ADMIN_UNREACHABLE, a slow one 504 ADMIN_TIMEOUT.
 */
export class AdminClient {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(options: AdminClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  get<T>(token: string, path: string, query?: AdminRequest['query'], endUser?: AdminEndUser): Promise<T> {
    return this.request<T>(token, 'GET', path, { query, ...endUser });
  }

  post<T>(token: string, path: string, body?: unknown, endUser?: AdminEndUser): Promise<T> {
    return this.request<T>(token, 'POST', path, { body, ...endUser });
  }

  patch<T>(token: string, path: string, body: unknown, endUser?: AdminEndUser): Promise<T> {
    return this.request<T>(token, 'PATCH', path, { body, ...endUser });
  }

  delete<T>(token: string, path: string, endUser?: AdminEndUser): Promise<T> {
    return this.request<T>(token, 'DELETE', path, { ...endUser });
  }

  url(path: string, query?: AdminRequest['query']): string {
    // An id or name of "." or ".." (encodeURIComponent keeps both) would be a dot segment, which URL resolution
    // removes: a key id of ".." once turned "revoke this key" into "revoke every key of the consumer".
    const route = path.split('?')[0];
    if (route.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) {
      throw new AdminApiError(400, 'VALIDATION_FAILED', 'An id or a name in this address is not valid.');
    }
    const url = new URL(`${this.baseUrl}${path.startsWith('/') ? path : `/${path}`}`);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null || value === '') continue;
      for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(item));
    }
    return url.toString();
  }

  async request<T>(
    token: string,
    method: string,
    path: string,
    { query, body, onBehalfOf, endUserAddress }: AdminRequest = {},
  ): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (onBehalfOf !== undefined) headers['x-on-behalf-of'] = headerText(onBehalfOf);
    if (endUserAddress !== undefined) headers['x-end-user-address'] = headerText(endUserAddress);
    let response: Response;
    const target = this.url(path, query);
    try {
      response = await fetch(target, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const name = (error as { name?: unknown } | null)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        throw new AdminApiError(504, 'ADMIN_TIMEOUT', `The admin API did not answer within ${this.timeoutMs} ms.`);
      }
      // The address goes to the log, never to a page: the portal's pages are public, the admin API private.
      adminClientLogger.warn(`The admin API at ${this.baseUrl} cannot be reached: ${(error as Error).message}`);
      throw new AdminApiError(503, 'ADMIN_UNREACHABLE', 'The admin API cannot be reached.');
    }
    const text = await response.text();
    let parsed: unknown = undefined;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    if (!response.ok) {
      if (isErrorBody(parsed)) throw new AdminApiError(response.status, parsed.code, parsed.message);
      throw new AdminApiError(
        response.status,
        'ADMIN_ERROR',
        `The admin API answered ${response.status} ${response.statusText}`.trim() + '.',
      );
    }
    return parsed as T;
  }
}
