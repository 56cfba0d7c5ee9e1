import { context, propagation, trace } from '@opentelemetry/api';
import { core, node, tracing } from '@opentelemetry/sdk-node';
import { hasSampledParent, propagateUnsampled, runQuietlyWhenUnsampled } from './unsampled';

describe('unsampled requests', () => {
  it('without tracing, runs the work as it is and propagates nothing', () => {
    expect(runQuietlyWhenUnsampled(() => 42)).toBe(42);
    const headers: Record<string, string> = {};
    propagateUnsampled(headers);
    expect(headers).toEqual({});
    expect(hasSampledParent()).toBe(false);
  });

  describe('with a tracer and the async context manager', () => {
    const exporter = new tracing.InMemorySpanExporter();
    const provider = new node.NodeTracerProvider({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('test');
    beforeAll(() => {
      provider.register();
      propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
    });
    afterAll(async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    });
    beforeEach(() => exporter.reset());

    /** Runs `work` as a request's handling, under a server span sampled or not (as a parent-based sampler would). */
    const asRequest = async <T>(sampled: boolean, work: () => Promise<T>): Promise<{ result: T; traceId: string }> => {
      const parent = trace.setSpanContext(context.active(), {
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        traceFlags: sampled ? 1 : 0,
      });
      const server = tracer.startSpan('GET /v1/pets', {}, parent);
      const result = await context.with(trace.setSpan(context.active(), server), () => runQuietlyWhenUnsampled(work));
      server.end();
      return { result, traceId: server.spanContext().traceId };
    };

    /** What a request's downstream work sees after an await: the active span, its children, the propagated header. */
    const downstream = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      // As pg, ioredis, Express and undici (with our hook) do: a child span only under a parent span.
      if (trace.getActiveSpan() !== undefined) tracer.startSpan('SELECT pets').end();
      const headers: Record<string, string> = {};
      propagateUnsampled(headers);
      return { active: trace.getActiveSpan(), sampledParent: hasSampledParent(), traceparent: headers.traceparent };
    };

    it('an unsampled request runs without its span: no child spans, and the decision still propagated (flags 00)', async () => {
      const { result, traceId } = await asRequest(false, downstream);
      expect(result.active).toBeUndefined(); // what makes pg, ioredis, Express and undici skip the call
      expect(exporter.getFinishedSpans()).toEqual([]); // nor is the (unsampled) server span recorded
      expect(result.sampledParent).toBe(false);
      expect(result.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    });

    it('a sampled request keeps its span: children are recorded under it, and nothing extra is propagated', async () => {
      const { result, traceId } = await asRequest(true, downstream);
      expect(result.active?.spanContext().traceId).toBe(traceId);
      expect(result.sampledParent).toBe(true);
      expect(result.traceparent).toBeUndefined(); // the HTTP client's instrumentation sets it
      const spans = exporter.getFinishedSpans();
      expect(spans.map((span) => span.name).sort()).toEqual(['GET /v1/pets', 'SELECT pets']);
      const child = spans.find((span) => span.name === 'SELECT pets')!;
      expect(child.parentSpanContext?.spanId).toBe(
        spans.find((span) => span.name === 'GET /v1/pets')!.spanContext().spanId,
      );
    });
  });
});
