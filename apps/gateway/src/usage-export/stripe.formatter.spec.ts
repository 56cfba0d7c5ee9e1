import { stripeFormBody, toStripeMeterEvent } from './stripe.formatter';
import { aggregateId, UsageAggregate } from './usage-aggregate';

const aggregate: UsageAggregate = {
  consumer: 'acme',
  operation: '*',
  outcome: 'ok',
  bucket: 'hour',
  start: Date.parse('2026-11-24T15:00:00Z'),
  count: 42,
  credits: 84,
};
const customers = { byConsumer: new Map([['acme', 'cus_NciAYcXfLnqBoz']]), template: undefined };

describe('the Stripe formatter (POST /v1/billing/meter_events)', () => {
  it('writes a meter event: identifier = aggregate id, the mapped customer, the chosen value, Unix seconds', () => {
    expect(
      toStripeMeterEvent(aggregate, { eventName: 'api_requests', customers, value: 'count', outcomes: ['ok'] }),
    ).toEqual({
      event: {
        event_name: 'api_requests',
        identifier: aggregateId(aggregate),
        timestamp: 1_795_532_400,
        payload: { stripe_customer_id: 'cus_NciAYcXfLnqBoz', value: '42' },
      },
    });
    const credits = toStripeMeterEvent(aggregate, {
      eventName: 'api_credits',
      customers,
      value: 'credits',
      outcomes: ['ok'],
    });
    expect(credits).toMatchObject({ event: { payload: { value: '84' } } });
  });

  it('meters only the configured outcomes (a Stripe meter sums every event it gets)', () => {
    const refused = { ...aggregate, outcome: 'rate_limited' as const };
    expect(toStripeMeterEvent(refused, { eventName: 'e', customers, value: 'count', outcomes: ['ok'] })).toEqual({
      skipped: 'not_metered',
    });
    expect(
      toStripeMeterEvent(refused, { eventName: 'e', customers, value: 'count', outcomes: ['ok', 'rate_limited'] }),
    ).toMatchObject({ event: { payload: { value: '42' } } });
  });

  it('skips a consumer without a Stripe customer, and credits where none are recorded', () => {
    expect(
      toStripeMeterEvent(
        { ...aggregate, consumer: 'beta' },
        { eventName: 'e', customers, value: 'count', outcomes: ['ok'] },
      ),
    ).toEqual({ skipped: 'unmapped' });
    expect(
      toStripeMeterEvent(
        { ...aggregate, credits: null },
        { eventName: 'e', customers, value: 'credits', outcomes: ['ok'] },
      ),
    ).toEqual({ skipped: 'no_value' });
  });

  it('form-encodes the body as the v1 API takes it', () => {
    const formatted = toStripeMeterEvent(aggregate, {
      eventName: 'api_requests',
      customers,
      value: 'count',
      outcomes: ['ok'],
    });
    if (!('event' in formatted)) throw new Error('not formatted');
    const body = stripeFormBody(formatted.event);
    expect(body).toBe(
      `event_name=api_requests&identifier=${aggregateId(aggregate)}&timestamp=1795532400` +
        '&payload%5Bstripe_customer_id%5D=cus_NciAYcXfLnqBoz&payload%5Bvalue%5D=42',
    );
    expect(Object.fromEntries(new URLSearchParams(body))).toEqual({
      event_name: 'api_requests',
      identifier: aggregateId(aggregate),
      timestamp: '1795532400',
      'payload[stripe_customer_id]': 'cus_NciAYcXfLnqBoz',
      'payload[value]': '42',
    });
  });
});
