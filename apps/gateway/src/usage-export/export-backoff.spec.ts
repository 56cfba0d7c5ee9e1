import { retryDelayMs } from './export-backoff';

describe('retryDelayMs', () => {
  it('doubles from the base per failed attempt, up to the maximum', () => {
    expect([1, 2, 3, 4, 5, 6].map((attempts) => retryDelayMs(attempts, 1_000, 10_000, 0.5))).toEqual([
      1_000, 2_000, 4_000, 8_000, 10_000, 10_000,
    ]);
    expect(retryDelayMs(500, 1_000, 600_000, 0.5)).toBe(600_000);
  });

  it('spreads each wait by ±20 %', () => {
    expect(retryDelayMs(3, 1_000, 60_000, 0)).toBe(3_200);
    expect(retryDelayMs(3, 1_000, 60_000, 0.999_999)).toBe(4_800);
  });
});
