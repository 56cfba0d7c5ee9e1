import { context, trace } from '@opentelemetry/api';
import { node, tracing } from '@opentelemetry/sdk-node';
import { recordEdgeOutcome } from './edge-outcome';

describe('recordEdgeOutcome', () => {
  it('does nothing (and throws nothing) without tracing: no active span', () => {
    expect(trace.getActiveSpan()).toBeUndefined();
    expect(() =>
      recordEdgeOutcome({ consumer: { name: 'acme', plan: 'pro' }, plan: 'pro', rateLimit: { outcome: 'allowed' } }),
    ).not.toThrow();
  });

  describe('with a tracer', () => {
    const exporter = new tracing.InMemorySpanExporter();
    const provider = new node.NodeTracerProvider({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });
    beforeAll(() => provider.register());
    afterAll(async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
    });
    beforeEach(() => exporter.reset());

    const within = (record: () => void) => {
      const span = provider.getTracer('test').startSpan('POST /v1/pets');
      context.with(trace.setSpan(context.active(), span), record);
      span.end();
      return exporter.getFinishedSpans()[0].attributes;
    };

    it('records the consumer, its plan and an allowed request on the active span', () => {
      const attributes = within(() => {
        recordEdgeOutcome({ consumer: { name: 'acme', plan: 'pro' } });
        recordEdgeOutcome({ plan: 'pro', rateLimit: { outcome: 'allowed' } });
      });
      expect(attributes).toEqual({
        'petstore.auth.result': 'accepted',
        'petstore.consumer.name': 'acme',
        'petstore.consumer.plan': 'pro',
        'petstore.rate_limit.outcome': 'allowed',
      });
    });

    it('records a refused key as anonymous, without a consumer name, and the window that refused', () => {
      const attributes = within(() => {
        recordEdgeOutcome({ consumer: null });
        recordEdgeOutcome({ plan: 'anonymous', rateLimit: { outcome: 'limited', window: 'minute' } });
      });
      expect(attributes).toEqual({
        'petstore.auth.result': 'refused',
        'petstore.consumer.plan': 'anonymous',
        'petstore.rate_limit.outcome': 'limited',
        'petstore.rate_limit.window': 'minute',
      });
    });
  });
});
