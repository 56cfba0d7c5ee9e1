import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from '@app/platform';
import { loadGatewayConfig } from '../config/gateway.config';
import { loadPlans } from '../plans/plans';
import { alertThresholdsOf } from '../plans/alert-thresholds';
import { ThresholdPolicy } from './threshold-policy';

const plansFile = (plans: Record<string, unknown>): string => {
  const file = join(mkdtempSync(join(tmpdir(), 'plans-')), 'plans.json');
  writeFileSync(file, JSON.stringify({ plans: { enterprise: 'custom', ...plans } }));
  return file;
};
const LIMITS = { perMinute: 60, perDay: 1000 };

describe('threshold policy', () => {
  it("takes a plan's alerts from plans.json, the gateway's for the others (and the custom plan)", () => {
    const plans = loadPlans(
      plansFile({
        free: LIMITS,
        pro: { ...LIMITS, alerts: { thresholdsPercent: [100, 50] } },
        business: { ...LIMITS, alerts: { creditsLowBalance: 5000 } },
      }),
    );
    const policy = new ThresholdPolicy(loadGatewayConfig({ ALERT_CREDITS_LOW_BALANCE: '10' }), plans);
    expect(policy.windowShares({ plan: 'free' })).toEqual([0.8, 1]);
    expect(policy.creditLevels({ plan: 'free' })).toEqual([10, 0]);
    expect(policy.windowShares({ plan: 'pro' })).toEqual([0.5, 1]);
    expect(policy.creditLevels({ plan: 'pro' })).toEqual([10, 0]);
    expect(policy.windowShares({ plan: 'business' })).toEqual([0.8, 1]);
    expect(policy.creditLevels({ plan: 'business' })).toEqual([5000, 0]);
    expect(policy.windowShares({ plan: 'enterprise' })).toEqual([0.8, 1]);
    // The same arrays for every request: nothing allocated on the request path.
    expect(policy.windowShares({ plan: 'free' })).toBe(policy.windowShares({ plan: 'free' }));
  });

  it("takes a consumer's own thresholds over its plan's, each side on its own, as loaded (the same arrays)", () => {
    const plans = loadPlans(
      plansFile({ free: LIMITS, pro: { ...LIMITS, alerts: { creditsLowBalance: 5000 } }, business: LIMITS }),
    );
    const policy = new ThresholdPolicy(loadGatewayConfig({}), plans);
    const own = alertThresholdsOf({ thresholdsPercent: [50, 90] });
    const consumer = { plan: 'pro' as const, alerts: own };
    expect(policy.windowShares(consumer)).toEqual([0.5, 0.9]);
    expect(policy.windowShares(consumer)).toBe(own!.shares);
    // The low balance is not its own: its plan's.
    expect(policy.creditLevels(consumer)).toEqual([5000, 0]);
    expect(policy.creditLevels({ plan: 'pro', alerts: alertThresholdsOf({ creditsLowBalance: 0 }) })).toEqual([0]);
    expect(policy.windowShares({ plan: 'pro', alerts: alertThresholdsOf({ creditsLowBalance: 0 }) })).toEqual([0.8, 1]);
    // Nothing of its own (null in the column, or an empty object): its plan's.
    expect(alertThresholdsOf(null)).toBeUndefined();
    expect(alertThresholdsOf({})).toBeUndefined();
  });

  it.each([
    [{ thresholdsPercent: [] }, 'thresholdsPercent'],
    [{ thresholdsPercent: [80, 120] }, 'thresholdsPercent'],
    [{ thresholdsPercent: '80' }, 'thresholdsPercent'],
    [{ creditsLowBalance: -1 }, 'creditsLowBalance'],
    [{ lowBalance: 5 }, 'unknown field lowBalance'],
    ['80', 'alerts must be an object'],
  ])('refuses a wrong plan alerts %j at start, naming the plan and the field', (alerts, message) => {
    const file = plansFile({ free: LIMITS, pro: { ...LIMITS, alerts }, business: LIMITS });
    expect(() => loadPlans(file)).toThrow(ConfigurationError);
    expect(() => loadPlans(file)).toThrow('plan "pro"');
    expect(() => loadPlans(file)).toThrow(message);
  });
});
