import { backoffDelay, parseRetryAfter } from './retry-policy';

describe('backoffDelay', () => {
  const options = { baseMs: 100, capMs: 1_000 };

  it('doubles the ceiling each attempt up to the cap (random = just under 1)', () => {
    const top = () => 0.999_999;
    expect([0, 1, 2, 3, 4, 5].map((attempt) => backoffDelay(attempt, options, top))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
  });

  it('draws the whole range from zero (full jitter)', () => {
    expect(backoffDelay(3, options, () => 0)).toBe(0);
    expect(backoffDelay(3, options, () => 0.5)).toBe(400);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2027-01-01T00:00:00Z');

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('3', now)).toBe(3_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('reads an HTTP date', () => {
    expect(parseRetryAfter('Fri, 01 Jan 2027 00:00:05 GMT', now)).toBe(5_000);
    expect(parseRetryAfter('Thu, 31 Dec 2026 23:59:00 GMT', now)).toBe(0);
  });

  it('ignores absent or unreadable values', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});
