import { refillAdds, refillPeriodAt } from './refill-period';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const period = (every: 'day' | 'month', anchor: string, now: string) => {
  const p = refillPeriodAt(every, at(anchor), at(now));
  return [iso(p.startMs), iso(p.endMs)];
};

describe('refillPeriodAt', () => {
  it('a daily refill runs from UTC midnight to the next, whatever the anchor', () => {
    expect(period('day', '2026-01-31T10:00:00.000Z', '2026-11-27T15:47:00.000Z')).toEqual([
      '2026-11-27T00:00:00.000Z',
      '2026-11-28T00:00:00.000Z',
    ]);
    // The last millisecond of a day belongs to it; midnight starts the next.
    expect(period('day', '2026-01-01T00:00:00.000Z', '2026-11-27T23:59:59.999Z')[1]).toBe('2026-11-28T00:00:00.000Z');
    expect(period('day', '2026-01-01T00:00:00.000Z', '2026-11-28T00:00:00.000Z')[0]).toBe('2026-11-28T00:00:00.000Z');
  });

  it('a monthly refill follows the billing anchor, clamped to shorter months', () => {
    expect(period('month', '2026-01-31T09:00:00.000Z', '2026-03-01T00:00:00.000Z')).toEqual([
      '2026-02-28T09:00:00.000Z',
      '2026-03-31T09:00:00.000Z',
    ]);
    expect(period('month', '2026-01-31T09:00:00.000Z', '2028-02-29T09:00:00.000Z')).toEqual([
      '2028-02-29T09:00:00.000Z',
      '2028-03-31T09:00:00.000Z',
    ]);
    // The last second before the reset is still the old period.
    expect(period('month', '2026-01-15T00:00:00.000Z', '2026-04-14T23:59:59.999Z')[1]).toBe('2026-04-15T00:00:00.000Z');
  });
});

describe('refillAdds', () => {
  it('tops the balance up to the amount, never lowers it, never piles up', () => {
    expect(refillAdds(1_000, 0)).toBe(1_000);
    expect(refillAdds(1_000, 120)).toBe(880);
    expect(refillAdds(1_000, 1_000)).toBe(0);
    expect(refillAdds(1_000, 5_000)).toBe(0);
  });
});
