import { OutboundAllowList } from '@app/outbound';
import { STRIPE_OUTCOME_NAMES, UsageExportConfig } from '../config/usage-export.config';
import { aggregateId, USAGE_OUTCOMES, UsageAggregate } from './usage-aggregate';
import { usageExportRequests } from './usage-export-requests';

const NOW = Date.parse('2026-11-24T16:05:00Z');
const hour = Date.parse('2026-11-24T15:00:00Z');
const aggregates: UsageAggregate[] = Array.from({ length: 130 }, (_, i) => ({
  consumer: i % 2 ? 'acme' : 'beta',
  operation: '*',
  outcome: 'ok',
  bucket: 'hour',
  start: hour - i * 3_600_000,
  count: i + 1,
  credits: null,
}));
const config = (format: UsageExportConfig['format']): UsageExportConfig => ({
  format,
  ingestUrl: 'https://billing.example/ingest',
  source: 'urn:petstore:gateway',
  name: 'api_requests',
  customers: { byConsumer: new Map([['acme', 'cus_acme']]), template: undefined },
  stripeValue: 'count',
  stripeOutcomes: ['ok'],
  settleMs: 60_000,
  allowList: OutboundAllowList.EMPTY,
  intervalMs: 10_000,
  retryMaxMs: 600_000,
});

describe('usageExportRequests', () => {
  it('takes in USAGE_EVENTS_STRIPE_OUTCOMES exactly the outcomes an aggregate has (the config stands below them)', () => {
    expect(STRIPE_OUTCOME_NAMES).toEqual(USAGE_OUTCOMES);
  });

  it('sends nothing when off', () => {
    expect(usageExportRequests(aggregates, config('off'), { now: NOW })).toEqual({ requests: [], skipped: [] });
  });

  it('batches CloudEvents, every aggregate in exactly one request, its ids listed', () => {
    const { requests } = usageExportRequests(aggregates, config('cloudevents'), { now: NOW });
    expect(requests.map((r) => r.ids.length)).toEqual([100, 30]);
    expect(requests.every((r) => r.contentType === 'application/cloudevents-batch+json')).toBe(true);
    expect(requests.flatMap((r) => (JSON.parse(r.body) as Array<{ id: string }>).map((e) => e.id))).toEqual(
      aggregates.map(aggregateId),
    );
  });

  it('sends Lago the mapped consumers and reports the others', () => {
    const { requests, skipped } = usageExportRequests(aggregates, config('lago'), { now: NOW });
    expect(requests.map((r) => r.ids.length)).toEqual([65]);
    expect(skipped).toHaveLength(65);
    expect(skipped.every((s) => s.consumer === 'beta' && s.reason === 'unmapped')).toBe(true);
  });

  it("sends Stripe one form request per event, holding the ones past the identifier's window", () => {
    const acme = [
      ...aggregates.filter((a) => a.consumer === 'acme').slice(0, 3),
      { ...aggregates[1], outcome: 'rate_limited' as const },
    ];
    const [first, second, third] = acme.map(aggregateId);
    const deliveries = new Map([
      [first, { acknowledged: true, firstAttemptAt: NOW - 60_000 }],
      [second, { acknowledged: false, firstAttemptAt: NOW - 24 * 3_600_000 }],
    ]);
    const { requests, skipped } = usageExportRequests(acme, config('stripe'), {
      now: NOW,
      deliveryOf: (id) => deliveries.get(id) ?? { acknowledged: false },
    });
    expect(requests.map((r) => r.ids)).toEqual([[third]]);
    expect(requests[0].contentType).toBe('application/x-www-form-urlencoded');
    expect(skipped.map((s) => [s.id, s.reason])).toEqual([
      [first, 'acknowledged'],
      [second, 'identifier_expired'],
      [aggregateId(acme[3]), 'not_metered'],
    ]);
  });
});
