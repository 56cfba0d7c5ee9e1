import { Logger } from '@nestjs/common';
import createClient, {
  createQuerySerializer,
  type Client,
  type ClientPathsWithMethod,
  type FetchResponse,
  type MaybeOptionalInit,
  type Middleware,
} from 'openapi-fetch';
import { AdminApiError, errorDetailsOf, isErrorBody } from './admin-api-error';
import type { paths } from './generated/admin-api';

const adminApiLogger = new Logger('AdminApi');

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

/**
 * What a bearer token may be made of: visible ASCII, one unbroken run (RFC 6750's b64token and more). A token with a
 * line break, a space or a control character in it was broken when pasted: it is never sent (fetch would throw
 * with the token in its message, and that message would reach a log).
 */
export function isBearerToken(token: string): boolean {
  return /^[\x21-\x7e]+$/.test(token);
}

/** A header carries printable ASCII: anything else is percent-encoded, so the label reaches the audit readable. */
export function headerText(value: string): string {
  return value.replace(/[^\x20-\x7e]/gu, (character) => encodeURIComponent(character));
}

export interface AdminApiOptions {
  /** The admin API's address, e.g. http://127.0.0.1:3002 (ADMIN_URL). */
  baseUrl: string;
  /** Per call; past it the call fails with 504 ADMIN_TIMEOUT. Default 10 s. */
  timeoutMs?: number;
}

type AdminFetch = Client<paths, 'application/json'>;
type Verb = 'get' | 'post' | 'put' | 'patch' | 'delete';
/** What a call's second argument may hold: its path and query parameters and its body, as the document types them. */
type CallInit<Path extends keyof paths, Method extends Verb> = MaybeOptionalInit<paths[Path], Method>;
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** The init is required when the operation has a required parameter or body, optional otherwise (as openapi-fetch). */
type CallArgs<Init> = RequiredKeys<Init> extends never ? [Init?] : [Init];
/** The 2xx answer's body: an error never reaches the caller as a value, it is thrown as an AdminApiError. */
type Answer<Response> = Response extends { data: infer Data } ? Data : never;
type Operation<Path extends keyof paths, Method extends Verb> = paths[Path][Method] & Record<string | number, unknown>;

type Call<Method extends Verb> = <
  Path extends ClientPathsWithMethod<AdminFetch, Method>,
  Init extends CallInit<Path, Method>,
>(
  path: Path,
  ...init: CallArgs<Init>
) => Promise<Answer<FetchResponse<Operation<Path, Method>, Init, 'application/json'>>>;

/**
 * One caller's view of the admin API: `GET('/consumers/{name}', { params: { path: { name } } })` resolves to the
 * 2xx body the document describes; a path the API does not have, a missing parameter or a body of the wrong shape
 * is a compile error. Every call carries the caller's token (and, when given, the end user behind it).
 */
export interface AdminCalls {
  GET: Call<'get'>;
  POST: Call<'post'>;
  PUT: Call<'put'>;
  PATCH: Call<'patch'>;
  DELETE: Call<'delete'>;
}

/** An id or a name of "." or ".." (encodeURIComponent keeps both) would be a dot segment, which URL resolution removes. */
const DOT_SEGMENT = /^(\.|%2e){1,2}$/i;

/**
 * The admin API's rules for every call, as an openapi-fetch middleware: a dot segment is refused before anything is
 * sent (a key id of ".." once turned "revoke this key" into "revoke every key of the consumer"); any answer other
 * than 2xx becomes an AdminApiError with the API's status, code and message (ADMIN_ERROR when the body is not the
 * Error contract); an unreachable API 503 ADMIN_UNREACHABLE, one slower than the timeout 504 ADMIN_TIMEOUT.
 */
export function adminApiRules(baseUrl: string, timeoutMs: number): Middleware {
  return {
    onRequest({ params }) {
      for (const value of Object.values(params.path ?? {})) {
        if (DOT_SEGMENT.test(String(value))) {
          throw new AdminApiError(400, 'VALIDATION_FAILED', 'An id or a name in this address is not valid.');
        }
      }
    },
    onError({ error }) {
      const name = (error as { name?: unknown } | null)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        return new AdminApiError(504, 'ADMIN_TIMEOUT', `The admin API did not answer within ${timeoutMs} ms.`);
      }
      // The address goes to the log, never to a page: the portal's pages are public, the admin API private. Only
      // the error's name and code, never its message: fetch's messages quote header values (a token).
      adminApiLogger.warn(`The admin API at ${baseUrl} cannot be reached: ${errorKind(error)}`);
      return new AdminApiError(503, 'ADMIN_UNREACHABLE', 'The admin API cannot be reached.');
    },
    async onResponse({ response }) {
      if (response.ok) return undefined;
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (isErrorBody(parsed))
        throw new AdminApiError(response.status, parsed.code, parsed.message, errorDetailsOf(parsed));
      throw new AdminApiError(
        response.status,
        'ADMIN_ERROR',
        `The admin API answered ${response.status} ${response.statusText}`.trim() + '.',
      );
    },
  };
}

/** A query value left empty (a filter field not filled in) is not sent, as if absent. */
const serializeQuery = createQuerySerializer<Record<string, unknown>>();
function querySerializer(query: Record<string, unknown>): string {
  return serializeQuery(Object.fromEntries(Object.entries(query).filter(([, value]) => value !== '')));
}

/** An error as a log may name it: its name and its cause's code (ECONNREFUSED), never its message. */
function errorKind(error: unknown): string {
  const name = (error as { name?: unknown } | null)?.name;
  const code = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  return [typeof name === 'string' ? name : 'Error', typeof code === 'string' ? code : ''].filter(Boolean).join(' ');
}

/** The calls of a token a header cannot carry: each refused as the admin API refuses a wrong token, nothing sent. */
function refusingCalls(): AdminCalls {
  const refuse = () =>
    Promise.reject(new AdminApiError(401, 'UNAUTHORIZED', 'The token has characters a header cannot carry.'));
  return { GET: refuse, POST: refuse, PUT: refuse, PATCH: refuse, DELETE: refuse } as unknown as AdminCalls;
}

/**
 * The typed client of the admin API: openapi-fetch over the types generated from its committed OpenAPI document
 * (libs/web/src/generated/admin-api.ts, `npm run client:generate`), with adminApiRules as its middleware.
 * `admin.as(token, endUser)` gives the calls made with that bearer token (the console: the signed-in operator's;
 * the portal: its own), naming the end user behind them when given (X-On-Behalf-Of, X-End-User-Address).
 */
export class AdminApi {
  private readonly client: AdminFetch;
  private readonly timeoutMs: number;

  constructor(options: AdminApiOptions) {
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.client = createClient<paths, 'application/json'>({ baseUrl, querySerializer });
    this.client.use(adminApiRules(baseUrl, this.timeoutMs));
  }

  as(token: string, { onBehalfOf, endUserAddress }: AdminEndUser = {}): AdminCalls {
    if (!isBearerToken(token)) return refusingCalls();
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (onBehalfOf !== undefined) headers['x-on-behalf-of'] = headerText(onBehalfOf);
    if (endUserAddress !== undefined) headers['x-end-user-address'] = headerText(endUserAddress);
    return this.calls(headers);
  }

  /** The calls made with no admin token: the routes whose credential is in the body (a person's sign-in, docs/sso.md). */
  withoutToken(): AdminCalls {
    return this.calls({ accept: 'application/json' });
  }

  private calls(headers: Record<string, string>): AdminCalls {
    const call =
      (method: Verb) =>
      async (path: string, init?: object): Promise<unknown> => {
        const { data } = await this.client.request(
          method,
          path as never,
          {
            ...(init as object),
            headers,
            signal: AbortSignal.timeout(this.timeoutMs),
          } as never,
        );
        return data;
      };
    return {
      GET: call('get') as Call<'get'>,
      POST: call('post') as Call<'post'>,
      PUT: call('put') as Call<'put'>,
      PATCH: call('patch') as Call<'patch'>,
      DELETE: call('delete') as Call<'delete'>,
    };
  }
}
