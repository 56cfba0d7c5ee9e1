import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { errors as undiciErrors, request } from 'undici';
import { OutboundRefusal, type OutboundFailure, type OutboundResponse, type OutboundResult } from './outbound-result';
import { systemResolver, type Resolver } from './resolver';
import { createSafeDispatcher } from './safe-dispatcher';
import { TargetPolicy, type TargetPolicyOptions } from './target-policy';

export interface OutboundClientOptions extends TargetPolicyOptions {
  /** How host names are resolved; the system's resolver by default (tests inject one: resolver.ts). */
  resolver?: Resolver;
  /** Certificate authorities to trust instead of Node's bundle (safe-dispatcher.ts). */
  ca?: string | Buffer | (string | Buffer)[];
}

export interface SendOptions {
  method?: 'POST' | 'PUT' | 'GET';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The whole attempt: resolution, connection, headers and body. 10 s by default. */
  timeoutMs?: number;
  /** The most of the answer's body kept; the rest is never read (the connection is closed). 64 KiB by default. */
  maxResponseBytes?: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

/** What a save-time check answers: the target may be reached, at these addresses, now (every send checks again). */
export interface TargetAccepted {
  kind: 'accepted';
  url: string;
  addresses: readonly string[];
}

const TIMEOUT = Symbol('timeout');
const BACKSTOP_MS = 1_000;

function elapsedSince(started: number): number {
  return Math.round(performance.now() - started);
}

/** An error that undici or a socket raised, as a failure: never the remote side's reason to throw. */
function failureOf(error: unknown, started: number): OutboundFailure {
  const latencyMs = elapsedSince(started);
  if (error instanceof OutboundRefusal) return { ...error.failure, latencyMs };
  if (error instanceof undiciErrors.HeadersOverflowError)
    return { kind: 'too_large', message: "the answer's headers are over the limit", latencyMs };
  if (
    error instanceof undiciErrors.ConnectTimeoutError ||
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError
  )
    return { kind: 'timeout', message: error.message, latencyMs };
  const code = (error as NodeJS.ErrnoException)?.code;
  const text = error instanceof Error ? error.message : String(error);
  return { kind: 'connect_error', message: code && !text.includes(code) ? `${code}: ${text}` : text, latencyMs };
}

/** Reads at most `cap` bytes of a body, then destroys it (undici closes the connection: the rest is never read). */
async function readCapped(body: Readable, cap: number): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (length + chunk.length > cap) {
      chunks.push(chunk.subarray(0, cap - length));
      body.destroy();
      return { body: Buffer.concat(chunks, cap), truncated: true };
    }
    chunks.push(chunk);
    length += chunk.length;
  }
  return { body: Buffer.concat(chunks, length), truncated: false };
}

/**
 * Sends requests to URLs that developers and operators configured (webhooks, exports), safely
 * (docs/webhooks.md): only to addresses the policy accepts, checked on every connection (safe-dispatcher.ts), within
 * a total time and a size cap, without following redirects. Each attempt has its connection of its own, closed when
 * it ends: no socket to a developer's server is kept between attempts. One client per configuration.
 */
export class OutboundClient {
  readonly policy: TargetPolicy;
  private readonly resolver: Resolver;
  private readonly ca: OutboundClientOptions['ca'];

  constructor(options: OutboundClientOptions) {
    this.policy = new TargetPolicy(options);
    this.resolver = options.resolver ?? systemResolver;
    this.ca = options.ca;
  }

  /**
   * The check when a URL is saved: its form, the HTTPS rule, and the addresses its host resolves to now. A
   * name that passes here is checked again by every send (a name can be re-pointed at any time).
   */
  async check(url: string): Promise<TargetAccepted | OutboundFailure> {
    const started = performance.now();
    const parsed = this.policy.parse(url);
    if (!(parsed instanceof URL)) return { ...parsed, latencyMs: elapsedSince(started) };
    const admitted = await this.policy.resolveAndVet(parsed, this.resolver);
    if (!('addresses' in admitted)) return { ...admitted, latencyMs: elapsedSince(started) };
    return { kind: 'accepted', url: parsed.href, addresses: admitted.addresses };
  }

  /**
   * Sends one request and answers the remote side's response (any status: redirects are not followed, a 3xx is
   * returned as it is) or a typed failure. Throws only for the caller's own mistakes (a header value undici refuses);
   * never for anything the remote side does.
   */
  async send(url: string, options: SendOptions = {}): Promise<OutboundResult> {
    const started = performance.now();
    const parsed = this.policy.parse(url);
    if (!(parsed instanceof URL)) return { ...parsed, latencyMs: elapsedSince(started) };
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const cap = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<typeof TIMEOUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMEOUT), timeoutMs);
    });
    // A dispatcher of the attempt's own, destroyed with it: whatever the attempt ends in (an answer, the deadline,
    // the cap), no connection of it outlives it, and the next attempt resolves and checks the name anew.
    const dispatcher = createSafeDispatcher({
      policy: this.policy,
      resolver: this.resolver,
      connectTimeoutMs: timeoutMs,
      ca: this.ca,
    });
    const attempt = async (): Promise<OutboundResult> => {
      const response = await request(parsed, {
        dispatcher,
        method: options.method ?? 'POST',
        headers: options.headers,
        body: options.body,
        signal: abort.signal,
        // Backstops only: the attempt's deadline below ends it first, with its own message.
        headersTimeout: timeoutMs + BACKSTOP_MS,
        bodyTimeout: timeoutMs + BACKSTOP_MS,
      });
      const read = await readCapped(response.body, cap);
      return {
        kind: 'response',
        status: response.statusCode,
        headers: response.headers,
        body: read.body,
        truncated: read.truncated,
        latencyMs: elapsedSince(started),
      } satisfies OutboundResponse;
    };
    const pending = attempt().catch((error: unknown) => {
      // The caller's own mistake (a header value with a line break, a body on GET): thrown, not a delivery failure.
      if (error instanceof undiciErrors.InvalidArgumentError) throw error;
      return failureOf(error, started);
    });
    try {
      const outcome = await Promise.race([pending, deadline]);
      if (outcome !== TIMEOUT) return outcome;
      abort.abort();
      return {
        kind: 'timeout',
        message: `no complete answer within ${timeoutMs} ms`,
        latencyMs: elapsedSince(started),
      };
    } finally {
      clearTimeout(timer);
      await dispatcher.destroy().catch(() => undefined);
    }
  }
}
