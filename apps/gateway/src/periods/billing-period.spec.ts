import { billingPeriodAt, nextBillingPeriod } from './billing-period';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
/** The period containing `now` for `anchor`, as ISO strings. */
const period = (anchor: string, now: string) => {
  const p = billingPeriodAt(at(anchor), at(now));
  return [iso(p.startMs), iso(p.endMs)];
};
/** The next `count` resets after `anchor`, walking period by period. */
const resets = (anchor: string, count: number) => {
  let p = billingPeriodAt(at(anchor), at(anchor));
  const out: string[] = [];
  for (let i = 0; i < count; i += 1) {
    out.push(iso(p.endMs));
    p = nextBillingPeriod(at(anchor), p);
  }
  return out;
};

describe('billingPeriodAt', () => {
  it('resets on the anchor day and time of every month, the 31st clamped to shorter months without sticking', () => {
    expect(resets('2026-01-31T10:00:00.000Z', 12)).toEqual([
      '2026-02-28T10:00:00.000Z', // 28 days, 2026 not leap
      '2026-03-31T10:00:00.000Z', // back on the 31st: the clamp does not stick
      '2026-04-30T10:00:00.000Z', // 30 days
      '2026-05-31T10:00:00.000Z',
      '2026-06-30T10:00:00.000Z',
      '2026-07-31T10:00:00.000Z',
      '2026-08-31T10:00:00.000Z',
      '2026-09-30T10:00:00.000Z',
      '2026-10-31T10:00:00.000Z',
      '2026-11-30T10:00:00.000Z',
      '2026-12-31T10:00:00.000Z',
      '2027-01-31T10:00:00.000Z', // over the year's end
    ]);
  });

  it('an anchor on the 30th and the 29th: only February is clamped', () => {
    expect(resets('2026-01-30T00:00:00.000Z', 3)).toEqual([
      '2026-02-28T00:00:00.000Z',
      '2026-03-30T00:00:00.000Z',
      '2026-04-30T00:00:00.000Z',
    ]);
    expect(resets('2026-01-29T00:00:00.000Z', 2)).toEqual(['2026-02-28T00:00:00.000Z', '2026-03-29T00:00:00.000Z']);
  });

  it('leap years: 29 February in 2028, not in 2100 (divisible by 100, not by 400), in 2000 (by 400)', () => {
    expect(resets('2028-01-31T00:00:00.000Z', 2)).toEqual(['2028-02-29T00:00:00.000Z', '2028-03-31T00:00:00.000Z']);
    expect(resets('2100-01-31T00:00:00.000Z', 2)).toEqual(['2100-02-28T00:00:00.000Z', '2100-03-31T00:00:00.000Z']);
    expect(resets('2000-01-30T00:00:00.000Z', 1)).toEqual(['2000-02-29T00:00:00.000Z']);
  });

  it('an anchor on 29 February resets on the 29th of every month, and on 28 February in common years', () => {
    expect(resets('2028-02-29T12:00:00.000Z', 13)).toEqual([
      '2028-03-29T12:00:00.000Z',
      '2028-04-29T12:00:00.000Z',
      '2028-05-29T12:00:00.000Z',
      '2028-06-29T12:00:00.000Z',
      '2028-07-29T12:00:00.000Z',
      '2028-08-29T12:00:00.000Z',
      '2028-09-29T12:00:00.000Z',
      '2028-10-29T12:00:00.000Z',
      '2028-11-29T12:00:00.000Z',
      '2028-12-29T12:00:00.000Z',
      '2029-01-29T12:00:00.000Z',
      '2029-02-28T12:00:00.000Z',
      '2029-03-29T12:00:00.000Z',
    ]);
  });

  it('the last millisecond and second before a reset belong to the period; the reset instant starts the next', () => {
    const anchor = '2026-01-31T23:59:59.000Z';
    expect(period(anchor, '2026-04-30T23:59:58.999Z')).toEqual([
      '2026-03-31T23:59:59.000Z',
      '2026-04-30T23:59:59.000Z',
    ]);
    expect(period(anchor, '2026-04-30T23:59:58.000Z')[1]).toBe('2026-04-30T23:59:59.000Z');
    expect(period(anchor, '2026-04-30T23:59:59.000Z')).toEqual([
      '2026-04-30T23:59:59.000Z',
      '2026-05-31T23:59:59.000Z',
    ]);
  });

  it('before the anchor time on the anchor day the previous period runs; a period across the year', () => {
    expect(period('2025-06-15T08:30:00.000Z', '2026-01-15T08:29:59.999Z')).toEqual([
      '2025-12-15T08:30:00.000Z',
      '2026-01-15T08:30:00.000Z',
    ]);
    expect(period('2025-06-15T08:30:00.000Z', '2026-01-15T08:30:00.000Z')).toEqual([
      '2026-01-15T08:30:00.000Z',
      '2026-02-15T08:30:00.000Z',
    ]);
  });

  it('a start clamped at the end of a month: the 31st anchor during early May is in the period from 30 April', () => {
    expect(period('2026-01-31T00:00:00.000Z', '2026-05-03T00:00:00.000Z')).toEqual([
      '2026-04-30T00:00:00.000Z',
      '2026-05-31T00:00:00.000Z',
    ]);
    expect(period('2026-01-31T00:00:00.000Z', '2026-03-01T00:00:00.000Z')).toEqual([
      '2026-02-28T00:00:00.000Z',
      '2026-03-31T00:00:00.000Z',
    ]);
  });

  it('an anchor in the future is a phase: it cuts the periods that contain now the same way', () => {
    expect(period('2027-03-15T12:00:00.000Z', '2026-11-27T15:00:00.000Z')).toEqual([
      '2026-11-15T12:00:00.000Z',
      '2026-12-15T12:00:00.000Z',
    ]);
    // At the anchor itself a period starts.
    expect(period('2027-03-15T12:00:00.000Z', '2027-03-15T12:00:00.000Z')[0]).toBe('2027-03-15T12:00:00.000Z');
  });

  it('always contains now, and consecutive periods meet, for anchors on every day of a year', () => {
    const now = at('2026-11-27T15:47:00.000Z');
    for (let day = 0; day < 366; day += 1) {
      const anchor = at('2024-01-01T06:07:08.009Z') + day * 86_400_000;
      const p = billingPeriodAt(anchor, now);
      expect(p.startMs).toBeLessThanOrEqual(now);
      expect(p.endMs).toBeGreaterThan(now);
      const next = nextBillingPeriod(anchor, p);
      expect(next.startMs).toBe(p.endMs);
      // 28 to 31 days.
      expect((p.endMs - p.startMs) / 86_400_000).toBeGreaterThanOrEqual(28);
      expect((p.endMs - p.startMs) / 86_400_000).toBeLessThanOrEqual(31);
    }
  });
});
