/**
 * What the tracing bootstrap reads from the environment before anything else loads. Deliberately free of
 * imports: with tracing off, this file is all of OpenTelemetry a process ever loads.
 */

/** `edge`: the public gateway (incoming trace context distrusted by default). `internal`: behind it (trusted). */
export type TracingRole = 'edge' | 'internal';

type Env = Record<string, string | undefined>;

const set = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

/**
 * Tracing is on when the standard variables ask for an exporter: an OTLP endpoint, or `OTEL_TRACES_EXPORTER`
 * naming one (`otlp`, `console`, ...). `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn it off.
 */
export function tracingRequested(env: Env = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters =
    env.OTEL_TRACES_EXPORTER?.split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean) ?? [];
  if (exporters.length > 0) return !exporters.every((name) => name === 'none');
  return set(env.OTEL_EXPORTER_OTLP_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

export const TRUST_INCOMING_TRACEPARENT = 'OTEL_TRUST_INCOMING_TRACEPARENT';

/**
 * Whether the edge continues a trace whose `traceparent` (and `baggage`) came from the client. Off by
 * default: the internet must not choose our trace ids, join our traces or force sampling. Turn it on only when
 * a proxy in front of the gateway sets (or strips) these headers. Validated even with tracing off, so that a
 * typo stops the app at start-up rather than when tracing is switched on.
 */
export function trustIncomingTraceparent(env: Env = process.env): boolean {
  const raw = env[TRUST_INCOMING_TRACEPARENT];
  if (!set(raw)) return false;
  const value = raw.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new Error(`Invalid configuration: ${TRUST_INCOMING_TRACEPARENT} must be true or false (got "${raw}")`);
}
