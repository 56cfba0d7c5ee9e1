import type { components, operations } from './generated/openapi';
import { backoffDelay, BackoffOptions, parseRetryAfter } from './retry-policy';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type ErrorBody = components['schemas']['Error'];
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>;
/** What `pets()` walks: every animal, or those of one status, fetched `limit` at a time (default 20). */
export type PetsWalkQuery = Omit<ListPetsQuery, 'after'>;

/** An answer other than 2xx, with the API's Error body. */
export class PetsApiError extends Error {
  override readonly name = 'PetsApiError';
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(`${status} ${body.code}: ${body.message}`);
  }

  get code(): string {
    return this.body.code;
  }
}

/** The last rate-limit figures the API sent (X-RateLimit-*): pace yourself with them. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix time in seconds when the reported window resets. */
  reset: number;
}

export interface DeprecationNotice {
  operation: string;
  deprecation?: string;
  sunset?: string;
  link?: string;
}

export interface PetsClientOptions {
  /** For example https://api.petstore.example.com/v1 */
  baseUrl: string;
  apiKey: string;
  /** Attempts per call, the first included (default 5). */
  maxAttempts?: number;
  /** Longest time a call may spend, waits included (default 120 s); past it the last error is thrown. */
  maxTotalMs?: number;
  backoff?: BackoffOptions;
  /** Called the first time an operation answers with Deprecation or Sunset; default: a process warning. */
  onDeprecation?: (notice: DeprecationNotice) => void;
  /** Seams for tests and other runtimes. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  random?: () => number;
}

const RETRYABLE_STATUSES = new Set([502, 503, 504]);
const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A client of the animals API that behaves as the spec asks (8.4): on 429 it waits for Retry-After; on
 * 502/503/504 and network errors it retries idempotent calls with capped exponential backoff and full jitter.
 * createPet is retried only when the request certainly did not reach the service (429, connection refused).
 */
export class PetsClient {
  private lastRateLimit?: RateLimitState;
  private readonly warned = new Set<string>();
  private readonly options: Required<Omit<PetsClientOptions, 'onDeprecation'>> &
    Pick<PetsClientOptions, 'onDeprecation'>;

  constructor(options: PetsClientOptions) {
    this.options = {
      maxAttempts: 5,
      maxTotalMs: 120_000,
      backoff: { baseMs: 200, capMs: 10_000 },
      fetch: globalThis.fetch.bind(globalThis),
      sleep: defaultSleep,
      now: Date.now,
      random: Math.random,
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
    };
  }

  get rateLimit(): RateLimitState | undefined {
    return this.lastRateLimit;
  }

  /** One page of animals. To read them all, use `pets()`, which follows the pages for you. */
  async listPets(query: ListPetsQuery = {}): Promise<Pet[]> {
    return (await this.send<Pet[]>('listPets', 'GET', this.listUrl(query), undefined, true)).body;
  }

  /**
   * Every animal (of `status`, when given) in ascending id order, page after page: follows each page's
   * `Link: <...>; rel="next"` until the last page, with the same waits and retries as every call (a 429 is
   * waited out, a 503 retried). Pages are fetched as the loop asks for them.
   *
   *     for await (const pet of client.pets({ status: 'available', limit: 100 })) ...
   */
  async *pets(query: PetsWalkQuery = {}): AsyncGenerator<Pet, void, undefined> {
    let url: string | undefined = this.listUrl(query);
    while (url !== undefined) {
      const page: { body: Pet[]; headers: Headers } = await this.send<Pet[]>('listPets', 'GET', url, undefined, true);
      yield* page.body;
      const next = nextLinkOf(page.headers.get('link'), url);
      if (next !== undefined && !this.isUnderBaseUrl(next)) {
        // The API key goes with every request: never to another origin or path than the one configured.
        throw new Error(
          `The next-page link ${next} is outside ${this.options.baseUrl}: not followed (is TRUST_PROXY set right on the gateway?)`,
        );
      }
      if (next === url) throw new Error(`The next-page link repeats the page just read (${url}): stopping.`);
      url = next;
    }
  }

  async createPet(newPet: NewPet): Promise<Pet> {
    return (await this.send<Pet>('createPet', 'POST', `${this.options.baseUrl}/pets`, JSON.stringify(newPet), false))
      .body;
  }

  /** @deprecated Removed on 5 December 2030: use `pets({ status })` (or listPets) instead. */
  async getPet(petId: number): Promise<Pet> {
    return (
      await this.send<Pet>(
        'getPet',
        'GET',
        `${this.options.baseUrl}/pets/${encodeURIComponent(String(petId))}`,
        undefined,
        true,
      )
    ).body;
  }

  private listUrl(query: ListPetsQuery): string {
    const search = new URLSearchParams();
    if (query.limit !== undefined) search.set('limit', String(query.limit));
    if (query.status !== undefined) search.set('status', query.status);
    if (query.after !== undefined) search.set('after', query.after);
    const suffix = search.size > 0 ? `?${search}` : '';
    return `${this.options.baseUrl}/pets${suffix}`;
  }

  private isUnderBaseUrl(url: string): boolean {
    const base = new URL(this.options.baseUrl);
    const target = new URL(url);
    return target.origin === base.origin && target.pathname.startsWith(`${base.pathname.replace(/\/$/, '')}/`);
  }

  private async send<T>(
    operation: string,
    method: string,
    url: string,
    body: string | undefined,
    idempotent: boolean,
  ): Promise<{ body: T; headers: Headers }> {
    const { maxAttempts, maxTotalMs, backoff, now, random, sleep } = this.options;
    const started = now();
    let lastError: unknown;
    for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
      let wait: number | undefined;
      try {
        const response = await this.options.fetch(url, {
          method,
          headers: {
            authorization: `Bearer ${this.options.apiKey}`,
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body,
        });
        this.observe(operation, response.headers);
        const payload: unknown = response.status === 204 ? undefined : await response.json().catch(() => undefined);
        if (response.ok) return { body: payload as T, headers: response.headers };
        lastError = new PetsApiError(response.status, toErrorBody(response.status, payload));
        if (response.status === 429) {
          // Refused at the edge: nothing was done, so waiting and retrying is safe for every operation.
          wait = parseRetryAfter(response.headers.get('retry-after'), now()) ?? backoffDelay(attempt, backoff, random);
        } else if (idempotent && RETRYABLE_STATUSES.has(response.status)) {
          wait = backoffDelay(attempt, backoff, random);
        }
      } catch (error) {
        lastError = error;
        if (idempotent || connectionRefused(error)) wait = backoffDelay(attempt, backoff, random);
      }
      if (wait === undefined || attempt === maxAttempts - 1 || now() - started + wait > maxTotalMs) break;
      await sleep(wait);
    }
    throw lastError;
  }

  private observe(operation: string, headers: Headers): void {
    const limit = headers.get('x-ratelimit-limit');
    const remaining = headers.get('x-ratelimit-remaining');
    const reset = headers.get('x-ratelimit-reset');
    if (limit !== null && remaining !== null && reset !== null) {
      this.lastRateLimit = { limit: Number(limit), remaining: Number(remaining), reset: Number(reset) };
    }
    const deprecation = headers.get('deprecation') ?? undefined;
    const sunset = headers.get('sunset') ?? undefined;
    if ((deprecation || sunset) && !this.warned.has(operation)) {
      this.warned.add(operation);
      const notice: DeprecationNotice = { operation, deprecation, sunset, link: headers.get('link') ?? undefined };
      if (this.options.onDeprecation) this.options.onDeprecation(notice);
      else
        process.emitWarning(
          `${operation} is deprecated${sunset ? `; it will be removed on ${sunset}` : ''}`,
          'DeprecationWarning',
        );
    }
  }
}

function toErrorBody(status: number, payload: unknown): ErrorBody {
  const candidate = payload as Partial<ErrorBody> | undefined;
  if (candidate && typeof candidate.code === 'string' && typeof candidate.message === 'string') {
    return { code: candidate.code, message: candidate.message, status: candidate.status ?? status } as ErrorBody;
  }
  return { code: 'INTERNAL_ERROR', message: `Unexpected answer with status ${status}`, status } as ErrorBody;
}

/**
 * The target of the `rel="next"` link in a Link field (RFC 8288), resolved against the URL of the page that
 * carried it; undefined when there is none. `rel` may list several relation types, quoted or not.
 */
export function nextLinkOf(field: string | null, pageUrl: string): string | undefined {
  if (!field) return undefined;
  for (const match of field.matchAll(/<([^>]*)>((?:\s*;\s*[^;,=\s]+\s*(?:=\s*(?:"(?:[^"\\]|\\.)*"|[^;,\s]*))?)*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/i.exec(match[2]);
    const types = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (types.includes('next')) return new URL(match[1], pageUrl).toString();
  }
  return undefined;
}

function connectionRefused(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause;
  return cause?.code === 'ECONNREFUSED';
}
