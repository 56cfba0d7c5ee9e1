import { PlanLimits } from '../plans/plan-limits';
import { PLAN_NAMES, PlanTable } from '../plans/plans';
import { consumerOf, consumerRecordOf, ConsumerRow } from './consumer-record';

const PLANS = Object.fromEntries(
  PLAN_NAMES.map((name) => [
    name,
    name === 'enterprise' ? 'custom' : { perMinute: 60, perDay: 1000, perMonth: 20_000 },
  ]),
) as PlanTable;

const row = (overrides: Partial<ConsumerRow> = {}): ConsumerRow => ({
  name: 'acme',
  plan: 'free',
  limit_per_minute: null,
  limit_per_day: null,
  limit_per_month: null,
  billing_anchor: new Date('2026-01-05T09:30:00.000Z'),
  recut_period_start: null,
  recut_period_end: null,
  credits_enabled: null,
  credit_refill: null,
  credit_costs: null,
  alert_thresholds: null,
  ...overrides,
});

/** One mapping from the consumers table to the Consumer the data plane sees: the key lookup's and the reconciliation's. */
describe('consumer record', () => {
  const planLimits = new PlanLimits(PLANS);

  it("maps a row to the consumer, its plan's limits filling what it has not of its own", () => {
    expect(consumerOf(consumerRecordOf(row()), planLimits)).toEqual({
      name: 'acme',
      plan: 'free',
      limits: { perMinute: 60, perDay: 1000, perMonth: 20_000 },
      billingAnchorMs: Date.parse('2026-01-05T09:30:00.000Z'),
      recutPeriod: null,
      credits: undefined,
      alerts: undefined,
    });
    const own = row({
      limit_per_minute: 5,
      limit_per_day: 50,
      limit_per_month: 500,
      recut_period_start: new Date('2026-01-05T09:30:00.000Z'),
      recut_period_end: new Date('2026-02-01T00:00:00.000Z'),
      credits_enabled: true,
      credit_refill: { amount: 100, every: 'day' },
    });
    expect(consumerOf(consumerRecordOf(own), planLimits)).toMatchObject({
      limits: { perMinute: 5, perDay: 50, perMonth: 500 },
      recutPeriod: { startMs: Date.parse('2026-01-05T09:30:00.000Z'), endMs: Date.parse('2026-02-01T00:00:00.000Z') },
      credits: { refill: { amount: 100, every: 'day' }, refillSet: true },
    });
  });

  it('works its own alert thresholds out once, when the row is read: the consumer carries the same arrays', () => {
    const record = consumerRecordOf(row({ alert_thresholds: { creditsLowBalance: 50, thresholdsPercent: [90, 50] } }));
    expect(record.alerts).toEqual({ shares: [0.5, 0.9], levels: [50, 0] });
    expect(consumerOf(record, planLimits)!.alerts).toBe(record.alerts);
  });

  it('a custom plan without limits of its own has no consumer', () => {
    expect(consumerOf(consumerRecordOf(row({ plan: 'enterprise' })), planLimits)).toBeUndefined();
  });
});
