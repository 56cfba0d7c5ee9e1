import { join } from 'node:path';
import { describeLimits, parsePlanCatalogue, planTitle, readPlanCatalogue } from './plan-catalogue';

describe('plan catalogue (gateway/plans.json, read by the web apps)', () => {
  it('reads the gateway plans file: every contract plan, limits as numbers, Enterprise custom', () => {
    const catalogue = readPlanCatalogue(join(__dirname, '../../../gateway/plans.json'));
    expect(Object.keys(catalogue).sort()).toEqual(['business', 'enterprise', 'free', 'pro']);
    expect(catalogue.enterprise).toBe('custom');
    expect(catalogue.free).toEqual({ perMinute: expect.any(Number), perDay: expect.any(Number) });
  });

  it('says limits in one wording, thousands separated, a month only where the file sets one', () => {
    expect(describeLimits({ perMinute: 300, perDay: 10_000 })).toBe('300 a minute, 10,000 a day');
    expect(describeLimits({ perMinute: 1, perDay: 2, perMonth: 1_000_000 })).toBe(
      '1 a minute, 2 a day, 1,000,000 a month',
    );
    expect(describeLimits('custom')).toBe('limits agreed with you');
    expect(describeLimits(null)).toBe('limits agreed with you');
    expect(planTitle('business')).toBe('Business');
  });

  it('ignores fields it does not know, and refuses a plan without positive integer limits, naming it', () => {
    const plans = {
      free: { perMinute: 60, perDay: 1000, burst: 5 },
      pro: { perMinute: 300, perDay: 10000, perMonth: 200000 },
      business: { perMinute: 1000, perDay: 100000 },
      enterprise: 'custom',
    };
    expect(parsePlanCatalogue({ plans }).free).toEqual({ perMinute: 60, perDay: 1000 });
    expect(parsePlanCatalogue({ plans }).pro).toEqual({ perMinute: 300, perDay: 10000, perMonth: 200000 });
    expect(() => parsePlanCatalogue({ plans: { ...plans, pro: { perMinute: 0, perDay: 1 } } }, 'p.json')).toThrow(
      'p.json: plan "pro" must be',
    );
    expect(() => parsePlanCatalogue({ plans: { ...plans, business: undefined } })).toThrow('plan "business"');
  });
});
