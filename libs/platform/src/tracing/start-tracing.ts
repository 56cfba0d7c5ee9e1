import { Context, context, TextMapGetter, TextMapPropagator, TextMapSetter, trace } from '@opentelemetry/api';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { core, NodeSDK, tracing } from '@opentelemetry/sdk-node';
import type { IncomingMessage } from 'node:http';
import type { TracingRole } from './tracing-environment';
import { decideSamplingFirst, firstSamplingOf } from './sampling-first';
import { hasSampledParent } from './unsampled';

/**
 * Propagates our trace context on outgoing calls but reads none from incoming requests: the edge starts a
 * trace of its own for every request, whatever `traceparent`/`baggage` the client sent.
 */
class InjectOnlyPropagator implements TextMapPropagator {
  constructor(private readonly inner: TextMapPropagator) {}
  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    this.inner.inject(context, carrier, setter);
  }
  extract(context: Context, _carrier: unknown, _getter: TextMapGetter): Context {
    return context;
  }
  fields(): string[] {
    return this.inner.fields();
  }
}

/** Probes and scrapes (every few seconds, from the orchestrator and Prometheus) would drown the real traces. */
const UNTRACED_PATHS = /^\/(health\/|metrics(\/|\?|$))/;

/** How long the last spans may take to leave when the process exits (the orchestrator's grace is longer). */
const EXIT_FLUSH_MS = 2000;

/** An Express layer as the instrumentation patches it: its `handle`, wrapped (shimmer) in place. */
interface PatchedLayer {
  handle: (...args: unknown[]) => unknown;
}
type ApplyPatch = (this: ExpressInstrumentation, layer: PatchedLayer, layerPath?: string) => void;

/**
 * The Express instrumentation, with its layer wrapper skipped for a request that has nothing to trace (no span and
 * no HTTP RPC metadata in its context: a request decided unsampled by sampling-first.ts, or a probe). The
 * instrumentation's own wrapper stores the layer's path, builds the route, the layer's metadata and attributes, and
 * only then finds that there is no span: ~2 % of the pets service's CPU at 10 % sampling, on every layer of every
 * unsampled request (docs/benchmarks.md). A request with a span in its context goes through the wrapper as before.
 */
function skippingUntracedLayers(instrumentation: ExpressInstrumentation): ExpressInstrumentation {
  const holder = instrumentation as unknown as { _applyPatch: ApplyPatch };
  const applyPatch = holder._applyPatch;
  holder._applyPatch = function (this: ExpressInstrumentation, layer: PatchedLayer, layerPath?: string): void {
    const original = layer.handle;
    applyPatch.call(this, layer, layerPath);
    const patched = layer.handle;
    if (patched === original) return; // an error handler, or a layer patched before: nothing was wrapped
    const handle = function (this: unknown, ...args: unknown[]): unknown {
      const active = context.active();
      if (trace.getSpan(active) === undefined && core.getRPCMetadata(active) === undefined)
        return original.apply(this, args);
      return patched.apply(this, args);
    };
    Object.defineProperty(handle, 'length', { value: patched.length });
    // What shimmer put on the wrapper (to unwrap it when the SDK stops), and the handle's own properties, which
    // the instrumentation's wrapper proxies to the original (opentelemetry-js-contrib#1950).
    for (const key of ['__original', '__unwrap', '__wrapped'])
      Object.defineProperty(handle, key, { value: (patched as unknown as Record<string, unknown>)[key] });
    for (const key in original)
      Object.defineProperty(handle, key, {
        get: () => (original as unknown as Record<string, unknown>)[key],
        set: (value: unknown) => {
          (original as unknown as Record<string, unknown>)[key] = value;
        },
      });
    layer.handle = handle;
  };
  return instrumentation;
}

const EDGE_IGNORED_LAYERS = [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER, ExpressLayerType.REQUEST_HANDLER];

export interface TracingOptions {
  role: TracingRole;
  trustIncoming: boolean;
  /** service.name when OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) does not name one. */
  defaultServiceName: string;
}

/**
 * The OpenTelemetry Node SDK, configured by the standard OTEL_* variables (exporter, endpoint, protocol,
 * headers, sampler, batch sizes, resource). Traces only: metrics stay on Prometheus and logs on stdout (with
 * trace_id and span_id) unless OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER ask for more.
 */
export function startTracing(options: TracingOptions): NodeSDK {
  const w3c = new core.CompositePropagator({
    propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
  });
  // Sampling is decided before the instrumentation sees a request (sampling-first.ts): what reaches the SDK is
  // sampled, and its sampler keeps it (following a sampled parent, or starting a trace).
  const sampling = firstSamplingOf();
  const sampler =
    sampling === undefined
      ? undefined
      : sampling.followParent
        ? new tracing.ParentBasedSampler({ root: new tracing.AlwaysOnSampler() })
        : new tracing.AlwaysOnSampler();
  const namesService =
    process.env.OTEL_SERVICE_NAME || /(^|,)\s*service\.name=/.test(process.env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    serviceName: namesService ? undefined : options.defaultServiceName,
    textMapPropagator: options.trustIncoming ? w3c : new InjectOnlyPropagator(w3c),
    ...(sampler ? { sampler } : {}),
    ...(process.env.OTEL_METRICS_EXPORTER ? {} : { metricReaders: [] }),
    ...(process.env.OTEL_LOGS_EXPORTER ? {} : { logRecordProcessors: [] }),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request: IncomingMessage) => UNTRACED_PATHS.test(request.url ?? ''),
        // Outgoing calls are traced only within a request (not the readiness probe's checks).
        requireParentforOutgoingSpans: true,
      }),
      // The route template on the server span (`http.route`, and its name). The pets service also gets a span
      // for its route handler; on the gateway the server span is the handler's span, so that what the edge
      // decided (recordEdgeOutcome) lands on it. Middleware layers (helmet, body, request id) are noise.
      skippingUntracedLayers(
        new ExpressInstrumentation({
          ignoreLayersType: options.role === 'edge' ? EDGE_IGNORED_LAYERS : [ExpressLayerType.MIDDLEWARE],
          // Nest's handlers are anonymous to Express ("request handler"): name the span by its route instead.
          spanNameHook: (info, defaultName) =>
            info.layerType === ExpressLayerType.REQUEST_HANDLER && info.route
              ? `handler ${info.request.method} ${info.route}`
              : defaultName,
        }),
      ),
      // The gateway's hop to the pets service: a client span, and `traceparent` on the request. Nothing for a
      // request whose trace is not sampled (upstream.service.ts then propagates the decision itself).
      new UndiciInstrumentation({ ignoreRequestHook: () => !hasSampledParent() }),
      // SQL text only (parameters are values a caller sent: never recorded).
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
      new IORedisInstrumentation({ requireParentSpan: true }),
      // trace_id / span_id / trace_flags on every log line written within a span; logs are not exported.
      new PinoInstrumentation({ disableLogSending: true }),
    ],
  });
  sdk.start();
  if (sampling) decideSamplingFirst(sampling, options.trustIncoming, UNTRACED_PATHS);
  flushBeforeExit(sdk);
  return sdk;
}

/**
 * The apps end with process.exit() after their graceful shutdown, which would drop the spans still waiting in
 * the batch (those of the last requests). Give them a bounded moment to leave first.
 */
function flushBeforeExit(sdk: NodeSDK): void {
  const exit = process.exit.bind(process);
  let exiting = false;
  process.exit = ((code?: number | string | null) => {
    if (exiting) return exit(code);
    exiting = true;
    const timer = setTimeout(() => exit(code), EXIT_FLUSH_MS);
    sdk.shutdown().finally(() => {
      clearTimeout(timer);
      exit(code);
    });
  }) as typeof process.exit;
}
