import { EventEmitter } from 'node:events';
import { IncomingMessage, Server } from 'node:http';
import { propagateUnsampled as propagateUnsampledContext } from './unsampled';

/**
 * The sampling decision, taken before OpenTelemetry sees a request (issue #39 point 2). The SDK's HTTP
 * instrumentation wraps every incoming request in a span and an async context, sampled or not: at 10 % sampling
 * the other 90 % paid for a context they never used. Here the decision comes first, from the standard
 * OTEL_TRACES_SAMPLER variables, and an unsampled request goes to the app without the instrumentation: no span,
 * no context, nothing for pg, ioredis or undici to see. A sampled one goes through it, and the SDK's sampler,
 * set to follow this decision (samplerFollowingFirstDecision), keeps it.
 */
export interface FirstSampling {
  /** The share of new traces (no parent to follow) that is sampled, from 0 to 1. */
  ratio: number;
  /** parentbased_*: a request with a `traceparent` we trust keeps its parent's decision. */
  followParent: boolean;
}

type Env = Record<string, string | undefined>;

/**
 * FirstSampling for OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG, or undefined for a sampler it does not
 * know (jaeger_remote, ...), which then decides alone as before. Throws on a ratio that is no number from 0 to 1.
 */
export function firstSamplingOf(env: Env = process.env): FirstSampling | undefined {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  const followParent = name.startsWith('parentbased_');
  const sampler = followParent ? name.slice('parentbased_'.length) : name;
  if (sampler === 'always_on') return { ratio: 1, followParent };
  if (sampler === 'always_off') return { ratio: 0, followParent };
  if (sampler !== 'traceidratio') return undefined;
  const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = raw ? Number(raw) : 1;
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    throw new Error(`Invalid configuration: OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (got "${raw}")`);
  return { ratio, followParent };
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * 2n random hex digits (Math.random, as the SDK's own id generator: ids, not secrets), eight a draw: a trace id
 * is four draws and four strings, not sixteen of each (every unsampled request makes one).
 */
function randomHex(n: number): string {
  let out = '';
  for (let i = 0; i < n; i += 4) out += ((Math.random() * 0x100000000) >>> 0).toString(16).padStart(8, '0');
  return n % 4 === 0 ? out : out.slice(0, 2 * n);
}

/**
 * Decides a request: undefined when it is sampled, else the `traceparent` (flags 00) that tells the services
 * behind that this trace is not sampled (the same trace id when a trusted parent sent one, a new one otherwise).
 */
export function unsampledTraceparent(
  sampling: FirstSampling,
  trustIncoming: boolean,
  traceparent: string | string[] | undefined,
  random: () => number = Math.random,
): string | undefined {
  if (sampling.followParent && trustIncoming && typeof traceparent === 'string') {
    const parent = TRACEPARENT.exec(traceparent.trim().toLowerCase());
    if (parent && !/^0+$/.test(parent[1]) && !/^0+$/.test(parent[2]))
      return (parseInt(parent[3], 16) & 1) === 1 ? undefined : `00-${parent[1]}-${randomHex(8)}-00`;
  }
  if (sampling.ratio >= 1 || random() < sampling.ratio) return undefined;
  return `00-${randomHex(16)}-${randomHex(8)}-00`;
}

interface Decider {
  sampling: FirstSampling;
  trustIncoming: boolean;
  /** Paths the instrumentation ignores anyway (probes, scrapes): past it, with no decision to remember. */
  untraced?: RegExp;
}

let decider: Decider | undefined;
const unsampled = new WeakMap<IncomingMessage, string>();

/** Called by startTracing when it set the SDK's sampler to follow this decision. */
export function decideSamplingFirst(sampling: FirstSampling, trustIncoming: boolean, untraced?: RegExp): void {
  decider = { sampling, trustIncoming, untraced };
}

/**
 * Makes `server` decide sampling before the instrumentation runs (configureHttpApp calls it for both apps; a
 * no-op with tracing off). An unsampled request is emitted as EventEmitter emits it, past the instrumentation's
 * wrapper of `http.Server.prototype.emit`.
 */
export function sampleFirst(server: Server): void {
  const current = decider;
  if (current === undefined) return;
  const plain = EventEmitter.prototype.emit;
  server.emit = function emit(this: Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'request') {
      const request = args[0] as IncomingMessage;
      if (current.untraced?.test(request.url ?? '')) return plain.call(this, event, ...args);
      const traceparent = unsampledTraceparent(current.sampling, current.trustIncoming, request.headers.traceparent);
      if (traceparent !== undefined) {
        unsampled.set(request, traceparent);
        return plain.call(this, event, ...args);
      }
    }
    // Looked up per request: the instrumentation's wrapper of it, whenever it was installed.
    return (Server.prototype.emit as (this: Server, event: string | symbol, ...rest: unknown[]) => boolean).call(
      this,
      event,
      ...args,
    );
  } as Server['emit'];
}

/**
 * Sets `traceparent` (flags 00) on a call made for a request decided unsampled: the service behind follows it
 * and traces nothing either. Otherwise a no-op (a sampled request's traceparent is set by the instrumentation).
 */
export function propagateUnsampled(request: IncomingMessage, headers: Record<string, string>): void {
  const traceparent = unsampled.get(request);
  if (traceparent !== undefined) headers.traceparent = traceparent;
  // A sampler decided without us (see firstSamplingOf): the request's unsampled span sits in its context.
  else if (decider === undefined) propagateUnsampledContext(headers);
}

/**
 * The trace fields of a request decided unsampled, for its log line (the instrumentation, which adds them to
 * the lines of traced requests, never saw it): its trace id, and flags 00 (nothing to look up). {} otherwise.
 */
export function unsampledLogFields(request: IncomingMessage): { trace_id?: string; trace_flags?: string } {
  const traceparent = unsampled.get(request);
  return traceparent === undefined ? {} : { trace_id: traceparent.slice(3, 35), trace_flags: '00' };
}
