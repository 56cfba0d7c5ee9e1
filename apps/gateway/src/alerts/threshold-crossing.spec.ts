import type { CreditState } from '../credits/credit-decision';
import {
  balanceBeforeSpend,
  CountedWindow,
  crossedLevels,
  crossedShares,
  crossesLevel,
  crossesShare,
  thresholdCount,
  windowPeriod,
} from './threshold-crossing';

const day = (count: number, limit = 1000): CountedWindow => ({
  name: 'day',
  limit,
  count,
  ttlMs: 86_400_000,
  resetMs: 3_600_000,
});
const credits = (balance: number, cost: number, refilledTo?: number): CreditState => ({
  balance,
  cost,
  refilled: refilledTo === undefined ? undefined : { amount: 0, balanceAfter: refilledTo, periodStartMs: 0 },
});

describe('threshold crossings', () => {
  it('a threshold is the count ceil(limit × share), never below 1, without floating-point noise', () => {
    expect(thresholdCount(1000, 0.8)).toBe(800);
    expect(thresholdCount(1000, 1)).toBe(1000);
    expect(thresholdCount(7, 0.8)).toBe(6); // 5.6 requests: the 6th reaches 80 %
    expect(thresholdCount(10, 0.7)).toBe(7); // 7.000000000000001 would round up to 8
    expect(thresholdCount(1, 0.01)).toBe(1);
  });

  it('the request that reaches the threshold exactly crosses it; the one before and the one after do not', () => {
    expect(crossedShares(day(799), [0.8, 1])).toEqual([]);
    expect(crossedShares(day(800), [0.8, 1])).toEqual([0.8]);
    expect(crossedShares(day(801), [0.8, 1])).toEqual([]);
    expect(crossedShares(day(1000), [0.8, 1])).toEqual([1]);
  });

  it('a count that jumps over two thresholds at once (a counter raised, a limit of 1) crosses both', () => {
    expect(crossesShare(700, 1000, 1000, 0.8)).toBe(true);
    expect(crossesShare(700, 1000, 1000, 1)).toBe(true);
    expect(crossedShares(day(1, 1), [0.8, 1])).toEqual([0.8, 1]);
    // Already past both: nothing crossed again.
    expect(crossesShare(1000, 1001, 1000, 1)).toBe(false);
  });

  it('a balance crosses a level when it falls from above it to it or below; a cost can cross two levels at once', () => {
    expect(crossesLevel(101, 100, 100)).toBe(true);
    expect(crossesLevel(100, 99, 100)).toBe(false); // already low
    expect(crossesLevel(100, 100, 100)).toBe(false);
    // 105 → 0 with a cost of 105: both the low balance and 0.
    expect(crossedLevels(credits(0, 105), [100, 0])).toEqual([100, 0]);
    // 110 → 105 with a cost of 5: still above both.
    expect(crossedLevels(credits(105, 5), [100, 0])).toEqual([]);
    // 104 → 99 with a cost of 5: the low balance only.
    expect(crossedLevels(credits(99, 5), [100, 0])).toEqual([100]);
  });

  it('a refill applied by the same decision is the balance before the cost, not the balance less the refill', () => {
    // 3 left, refilled to 150, then 60 taken: 150 → 90 crosses 100; 3 + 60 = 63 would not have.
    expect(balanceBeforeSpend(credits(90, 60, 150))).toBe(150);
    expect(crossedLevels(credits(90, 60, 150), [100, 0])).toEqual([100]);
    expect(balanceBeforeSpend(credits(90, 60))).toBe(150);
  });

  it("a rolling window's period ends at its reset and lasts its length", () => {
    expect(windowPeriod(day(5), 1_000_000)).toEqual({ startMs: 1_000_000 + 3_600_000 - 86_400_000, endMs: 4_600_000 });
  });

  it("a month's period is its billing period, exact to the millisecond, whichever of the two the store's clock took", () => {
    const anchor = { billingAnchorMs: Date.UTC(2026, 0, 10, 9, 0, 0, 123) };
    const month = (resetMs: number, ttlMs: number): CountedWindow => ({
      name: 'month',
      limit: 100,
      count: 80,
      ttlMs,
      resetMs,
    });
    const now = Date.UTC(2026, 2, 1);
    // 10 Feb 09:00:00.123 → 10 Mar 09:00:00.123 (28 days); the store's reset a few ms off the gateway's clock.
    const february = { startMs: Date.UTC(2026, 1, 10, 9, 0, 0, 123), endMs: Date.UTC(2026, 2, 10, 9, 0, 0, 123) };
    expect(windowPeriod(month(february.endMs - now - 4, 28 * 86_400_000), now, anchor)).toEqual(february);
    expect(windowPeriod(month(february.endMs - now + 4, 28 * 86_400_000), now, anchor)).toEqual(february);
    // At the reset, the store's clock already in March's period: that one, 10 Mar → 10 Apr.
    const atEnd = february.endMs - 2;
    expect(windowPeriod(month(31 * 86_400_000 + 2, 31 * 86_400_000), atEnd, anchor)).toEqual({
      startMs: february.endMs,
      endMs: Date.UTC(2026, 3, 10, 9, 0, 0, 123),
    });
  });
});
