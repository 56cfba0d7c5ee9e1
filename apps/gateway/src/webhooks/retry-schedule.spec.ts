import { MAX_ATTEMPTS, RETRY_DELAYS_MS, retryDelayMs } from './retry-schedule';

describe('the retry schedule', () => {
  it("is the field's: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then given up", () => {
    expect(MAX_ATTEMPTS).toBe(8);
    expect(RETRY_DELAYS_MS).toEqual([5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6]);
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n, 0.5))).toEqual(RETRY_DELAYS_MS);
    expect(retryDelayMs(8, 0.5)).toBeNull();
    expect(retryDelayMs(0, 0.5)).toBeNull();
  });

  it('moves each delay by at most 10 % either way', () => {
    for (let n = 1; n < MAX_ATTEMPTS; n += 1) {
      const delay = RETRY_DELAYS_MS[n - 1];
      expect(retryDelayMs(n, 0)).toBe(Math.round(delay * 0.9));
      expect(retryDelayMs(n, 1)).toBe(Math.round(delay * 1.1));
      for (let i = 0; i < 50; i += 1) {
        const jittered = retryDelayMs(n)!;
        expect(jittered).toBeGreaterThanOrEqual(Math.round(delay * 0.9));
        expect(jittered).toBeLessThanOrEqual(Math.round(delay * 1.1));
      }
    }
  });
});
