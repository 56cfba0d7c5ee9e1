import type { components, operations } from './generated/openapi';
import { backoffDelay, BackoffOptions, parseRetryAfter } from './retry-policy';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type ErrorBody = components['schemas']['Error'];
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>;

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
  private readonly options: Required<Omit<PetsClientOptions, 'onDeprecation'>> & Pick<PetsClientOptions, 'onDeprecation'>;

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

  listPets(query: ListPetsQuery = {}): Promise<Pet[]> {
    const search = new URLSearchParams();
    if (query.limit !== undefined) search.set('limit', String(query.limit));
    if (query.status !== undefined) search.set('status', query.status);
    const suffix = search.size > 0 ? `?${search}` : '';
    return this.send<Pet[]>('listPets', 'GET', `/pets${suffix}`, undefined, true);
  }

  createPet(newPet: NewPet): Promise<Pet> {
    return this.send<Pet>('createPet', 'POST', '/pets', JSON.stringify(newPet), false);
  }

  /** @deprecated Removed on 5 December 2030: use listPets with a status filter. */
  getPet(petId: number): Promise<Pet> {
    return this.send<Pet>('getPet', 'GET', `/pets/${encodeURIComponent(String(petId))}`, undefined, true);
  }

  private async send<T>(operation: string, method: string, path: string, body: string | undefined, idempotent: boolean): Promise<T> {
    const { maxAttempts, maxTotalMs, backoff, now, random, sleep } = this.options;
    const started = now();
    let lastError: unknown;
    for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
      let wait: number | undefined;
      try {
        const response = await this.options.fetch(`${this.options.baseUrl}${path}`, {
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
        if (response.ok) return payload as T;
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
      else process.emitWarning(`${operation} is deprecated${sunset ? `; it will be removed on ${sunset}` : ''}`, 'DeprecationWarning');
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

function connectionRefused(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause;
  return cause?.code === 'ECONNREFUSED';
}
