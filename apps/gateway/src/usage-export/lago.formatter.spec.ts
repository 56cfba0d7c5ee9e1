import { LAGO_BATCH_LIMIT, lagoBatches, toLagoEvent } from './lago.formatter';
import { aggregateId, UsageAggregate } from './usage-aggregate';

const start = Date.parse('2026-11-24T15:00:00Z');
const aggregate: UsageAggregate = {
  consumer: 'acme',
  operation: '*',
  outcome: 'client_error',
  bucket: 'hour',
  start,
  count: 5,
  credits: null,
};
const options = {
  code: 'api_requests',
  customers: { byConsumer: new Map([['acme', 'sub_acme_2026']]), template: undefined },
};

describe('the Lago formatter (POST /api/v1/events/batch)', () => {
  it('writes an event: transaction_id = aggregate id, the mapped subscription, the metric code, Unix seconds', () => {
    expect(toLagoEvent(aggregate, options)).toEqual({
      transaction_id: aggregateId(aggregate),
      external_subscription_id: 'sub_acme_2026',
      code: 'api_requests',
      timestamp: 1_795_532_400,
      properties: { count: 5, operation: '*', outcome: 'client_error', bucket: 'hour' },
    });
    expect(new Date(1_795_532_400 * 1000).toISOString()).toBe('2026-11-24T15:00:00.000Z');
    expect(toLagoEvent({ ...aggregate, credits: 12 }, options)?.properties.credits).toBe(12);
  });

  it('maps a consumer by the file first, then by the template, else reports it unmapped', () => {
    const customers = { byConsumer: new Map([['acme', 'sub_special']]), template: 'sub_{consumer}' };
    const { bodies, unmapped } = lagoBatches([aggregate, { ...aggregate, consumer: 'beta' }], {
      code: 'api_requests',
      customers,
    });
    expect(bodies[0].events.map((event) => event.external_subscription_id)).toEqual(['sub_special', 'sub_beta']);
    expect(unmapped).toEqual([]);
    const none = lagoBatches([{ ...aggregate, consumer: 'beta' }], options);
    expect(none.bodies).toEqual([]);
    expect(none.unmapped.map((a) => a.consumer)).toEqual(['beta']);
  });

  it('never puts more than 100 events in a body, and keeps every event once, in order', () => {
    const many = Array.from({ length: 250 }, (_, i) => ({ ...aggregate, start: start - i * 3_600_000 }));
    const { bodies } = lagoBatches(many, options);
    expect(LAGO_BATCH_LIMIT).toBe(100);
    expect(bodies.map((body) => body.events.length)).toEqual([100, 100, 50]);
    expect(bodies.flatMap((body) => body.events.map((event) => event.transaction_id))).toEqual(many.map(aggregateId));
    // A smaller size is honoured, a larger one capped.
    expect(lagoBatches(many, options, 60).bodies.map((body) => body.events.length)).toEqual([60, 60, 60, 60, 10]);
    expect(lagoBatches(many, options, 1000).bodies).toHaveLength(3);
  });
});
