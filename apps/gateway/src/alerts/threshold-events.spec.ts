import { AppMetrics } from '@app/platform';
import type { Clock } from '../clock';
import { loadGatewayConfig } from '../config/gateway.config';
import type { Consumer } from '../consumers/consumer';
import type { PlanTable } from '../plans/plans';
import type { ObservedDecision } from './threshold-crossing';
import { ThresholdEvents } from './threshold-events';
import type { ThresholdCandidate, ThresholdEventsRepository } from './threshold-events.repository';
import { ThresholdMetrics } from './threshold-metrics';
import { ThresholdPolicy } from './threshold-policy';

const consumer: Consumer = {
  name: 'acme',
  plan: 'free',
  limits: { perMinute: 60, perDay: 10 },
  billingAnchorMs: 0,
};
const now = 1_000_000;
const plans: PlanTable = {
  free: { perMinute: 60, perDay: 1000 },
  pro: { perMinute: 300, perDay: 10000, alerts: { thresholdsPercent: [50, 90], creditsLowBalance: 0 } },
  business: { perMinute: 1000, perDay: 100000 },
  enterprise: 'custom',
};

function events(env: Record<string, string> = {}) {
  const config = loadGatewayConfig({ PETS_URL: 'http://127.0.0.1:1', ALERT_CREDITS_LOW_BALANCE: '5', ...env });
  const written: ThresholdCandidate[] = [];
  // Nothing known written beforehand; every write answers 'duplicate' (so the memory of events learns nothing wrong).
  const repository = {
    record: async (candidate: ThresholdCandidate) => (written.push(candidate), 'duplicate'),
    alreadyWritten: async () => new Set<number>(),
  };
  const clock = { now: () => now } as Clock;
  const service = new ThresholdEvents(
    new ThresholdPolicy(config, plans),
    repository as unknown as ThresholdEventsRepository,
    new ThresholdMetrics(new AppMetrics('gateway')),
    clock,
    config,
  );
  return { service, written };
}

const decision = (outcome: string, dayCount: number, credits?: ObservedDecision['credits']): ObservedDecision => ({
  outcome,
  windows: [
    { name: 'minute', limit: 60, count: dayCount, ttlMs: 60_000, resetMs: 30_000 },
    { name: 'day', limit: 10, count: dayCount, ttlMs: 86_400_000, resetMs: 3_600_000 },
  ],
  credits,
});

describe('threshold events on the request path', () => {
  it('queues the crossing of an admitted request, written by the next flush; a minute window raises none', async () => {
    const { service, written } = events();
    service.observe(consumer, decision('allowed', 7), now);
    service.observe(consumer, decision('allowed', 8), now);
    service.observe(consumer, decision('allowed', 9), now);
    service.observe(consumer, decision('allowed', 10), now);
    expect(written).toEqual([]);
    await service.flush();
    expect(written.map((c) => [c.policy, c.threshold, c.used])).toEqual([
      ['day', 80, 8],
      ['day', 100, 10],
    ]);
  });

  it('a refused request counts nowhere, so it crosses nothing (its counts are the window as it was)', async () => {
    const { service, written } = events();
    service.observe(consumer, decision('limited', 8), now);
    service.observe(consumer, decision('banned', 8), now);
    service.observe(consumer, decision('exhausted', 8, { balance: 5, cost: 1 }), now);
    await service.flush();
    expect(written).toEqual([]);
  });

  it('credits: one cost that takes the balance from above the low level to 0 crosses both', async () => {
    const { service, written } = events();
    service.observe(consumer, decision('allowed', 1, { balance: 0, cost: 6 }), now);
    await service.flush();
    expect(written.map((c) => [c.policy, c.threshold, c.balance])).toEqual([
      ['credits', 5, 0],
      ['credits', 0, 0],
    ]);
  });

  it("a plan's own thresholds (plans.json `alerts`) replace the gateway's for its consumers", async () => {
    const { service, written } = events();
    const pro: Consumer = { ...consumer, plan: 'pro' };
    for (let count = 1; count <= 10; count += 1) service.observe(pro, decision('allowed', count), now);
    // A low balance of 0: only the balance reaching 0.
    service.observe(pro, decision('allowed', 10, { balance: 0, cost: 6 }), now);
    await service.flush();
    expect(written.map((c) => [c.policy, c.threshold])).toEqual([
      ['day', 50],
      ['day', 90],
      ['credits', 0],
    ]);
  });

  it('ALERTS_ENABLED=false: nothing queued', async () => {
    const { service, written } = events({ ALERTS_ENABLED: 'false' });
    service.observe(consumer, decision('allowed', 8), now);
    await service.flush();
    expect(written).toEqual([]);
  });

  it('never throws into the request, whatever the decision carries', () => {
    const { service } = events();
    const broken = { outcome: 'allowed', windows: null } as unknown as ObservedDecision;
    expect(() => service.observe(consumer, broken, now)).not.toThrow();
  });
});
