import { Clock } from '../../clock';
import type { RateLimitStore } from '../../rate-limit/rate-limit-store';
import type { UsageHistoryService } from '../../usage/usage-history.service';
import type { UsageService } from '../../usage/usage.service';
import type { BillingState } from '../billing.service';
import { MonthQuotaCountService } from './month-quota-count.service';

const at = (iso: string) => Date.parse(iso);
const HOUR = 3_600_000;

/** The service over an hourly history of 10 requests (one of them a 429) in every hour, and a store that records. */
function setUp(now: string) {
  const asked: Array<{ from: number; to: number }> = [];
  const raised: Array<{ key: string; atLeast: number; endMs: number; nextEndMs: number }> = [];
  const history = {
    history: async (_consumer: string, range: { from: Date; to: Date }) => {
      asked.push({ from: range.from.getTime(), to: range.to.getTime() });
      const hours = [];
      for (let t = range.from.getTime(); t < range.to.getTime(); t += HOUR)
        hours.push({ start: t, requests: 10, rateLimited: 1 });
      return hours;
    },
  } as unknown as UsageHistoryService;
  const store = {
    raiseWindow: async (key: string, window: { period: { endMs: number; nextEndMs: number } }, atLeast: number) => {
      raised.push({ key, atLeast, ...window.period });
      return atLeast;
    },
  } as unknown as RateLimitStore;
  const usage = { flush: async () => undefined } as unknown as UsageService;
  const clock = new (class extends Clock {
    override now(): number {
      return at(now);
    }
  })();
  return { service: new MonthQuotaCountService(store, history, usage, clock), asked, raised };
}

const state = (overrides: Partial<BillingState>): BillingState => ({
  consumer: 'acme',
  billingAnchor: new Date('2026-01-05T09:30:00.000Z'),
  anchorSet: true,
  createdAt: new Date('2026-01-01T00:00:00.000Z'),
  ownPerMonth: 1000,
  perMonth: 1000,
  currentPeriod: { startMs: at('2026-11-05T09:30:00.000Z'), endMs: at('2026-12-05T09:30:00.000Z') },
  costs: { listPets: 1, createPet: 1, getPet: 1 },
  alerts: null,
  ...overrides,
});

describe('MonthQuotaCountService', () => {
  it('counts the admitted answers of the whole hours since the period started, for a consumer older than it', async () => {
    const { service, asked, raised } = setUp('2026-11-05T12:10:00.000Z');
    expect(await service.countPeriodSoFar(state({}))).toBe(27);
    // 09:30 starts the period: the 09:00 hour holds the previous period's tail too, so the count opens at 10:00.
    expect(asked).toEqual([{ from: at('2026-11-05T10:00:00.000Z'), to: at('2026-11-05T12:10:00.000Z') }]);
    expect(raised).toEqual([
      {
        key: 'consumer:acme',
        atLeast: 27, // 10:00, 11:00 and 12:00: 3 × (10 − 1)
        endMs: at('2026-12-05T09:30:00.000Z'),
        nextEndMs: at('2027-01-05T09:30:00.000Z'),
      },
    ]);
  });

  it('counts the hour the period starts in for a consumer created in the period: none of its answers is older', async () => {
    const { service, asked } = setUp('2026-11-05T12:10:00.000Z');
    await service.countPeriodSoFar(
      state({
        anchorSet: false,
        createdAt: new Date('2026-11-05T09:30:00.000Z'),
        billingAnchor: new Date('2026-11-05T09:30:00.000Z'),
      }),
    );
    expect(asked[0].from).toBe(at('2026-11-05T09:00:00.000Z'));
  });

  it('raises nothing without a quota in force', async () => {
    const { service, raised } = setUp('2026-11-05T12:10:00.000Z');
    expect(await service.countPeriodSoFar(state({ perMonth: null, ownPerMonth: null }))).toBeUndefined();
    expect(raised).toEqual([]);
  });
});
