import { context, createContextKey, propagation, ROOT_CONTEXT, Span, trace, TraceFlags } from '@opentelemetry/api';

/** Where an unsampled request keeps its span once it is taken out of the active context (see below). */
const UNSAMPLED_SPAN_KEY = createContextKey('petstore unsampled request span');

const sampled = (span: Span): boolean => (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;

/**
 * Runs `work` (the rest of a request) without the request's span in the active context when that span is not
 * sampled. Every instrumentation we use skips a call that has no parent span (pg, ioredis and Express at once, by
 * their `requireParentSpan`-style checks; undici by start-tracing.ts's ignoreRequestHook), so an unsampled request
 * makes no child span at all: a non-recording span still costs its attributes, its ids, its context and its
 * callbacks, per hop and per query, which made 10 % sampling cost nearly what 100 % did. A sampled request, or
 * none (tracing off: the API's no-op context), runs `work` as it is.
 */
export function runQuietlyWhenUnsampled<T>(work: () => T): T {
  const active = context.active();
  const span = trace.getSpan(active);
  if (span === undefined || sampled(span)) return work();
  return context.with(trace.deleteSpan(active).setValue(UNSAMPLED_SPAN_KEY, span), work);
}

/** Express middleware: the rest of the request's handling under runQuietlyWhenUnsampled. */
export function quietWhenUnsampled(_request: unknown, _response: unknown, next: () => void): void {
  runQuietlyWhenUnsampled(next);
}

/** Whether the active context has a sampled span: what an outgoing call needs to be traced at all. */
export function hasSampledParent(): boolean {
  const span = trace.getSpan(context.active());
  return span !== undefined && sampled(span);
}

/**
 * Sets `traceparent` (flags 00) on an outgoing request made under runQuietlyWhenUnsampled, where the HTTP client's
 * instrumentation, skipped, sets none: the service behind must still learn that this trace is not sampled, or
 * its parent-based sampler would decide again, alone, and keep orphan halves of traces. Otherwise a no-op.
 */
export function propagateUnsampled(headers: Record<string, string>): void {
  const span = context.active().getValue(UNSAMPLED_SPAN_KEY) as Span | undefined;
  if (span !== undefined) propagation.inject(trace.setSpan(ROOT_CONTEXT, span), headers);
}
