import { moveAnchor, RecutPeriod } from '../periods/billing-period';
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

/**
 * A consumer with a monthly refill whose anchor an operator moves: what the refill period is at each decision,
 * and how many refills its decisions apply (the stores' rule: a refill when the period's start is later than the
 * last one refilled).
 */
class MonthlyRefills {
  private anchorMs: number;
  private recut: RecutPeriod | null = null;
  private refilledStartMs = 0;
  readonly refills: string[] = [];

  constructor(anchor: string) {
    this.anchorMs = at(anchor);
  }

  move(anchor: string, when: string): void {
    this.recut = moveAnchor(this.anchorMs, this.recut, at(anchor), at(when)).recut;
    this.anchorMs = at(anchor);
  }

  period(when: string): [string, string] {
    const p = refillPeriodAt('month', this.anchorMs, at(when), this.recut);
    return [iso(p.startMs), iso(p.endMs)];
  }

  decide(when: string): void {
    const p = refillPeriodAt('month', this.anchorMs, at(when), this.recut);
    if (p.startMs > this.refilledStartMs) {
      this.refilledStartMs = p.startMs;
      this.refills.push(iso(p.startMs));
    }
  }
}

describe('refillPeriodAt after the anchor moves: a refill belongs to its period, not to an edit', () => {
  const APR_1 = '2026-04-01T00:00:00.000Z';

  it('a move that starts the period later grants nothing: the period keeps its start and ends at the new reset', () => {
    const c = new MonthlyRefills('2026-01-01T00:00:00.000Z');
    c.decide('2026-04-02T08:00:00.000Z');
    expect(c.refills).toEqual([APR_1]);
    c.move('2026-01-05T00:00:00.000Z', '2026-04-10T12:00:00.000Z');
    // The new anchor alone would say 5 Apr -> 5 May: a period started after the refill, so a second refill.
    expect(c.period('2026-04-10T12:00:00.000Z')).toEqual([APR_1, '2026-05-05T00:00:00.000Z']);
    c.decide('2026-04-10T12:00:01.000Z');
    // The old reset (1 May) passes without a refill: the period in progress was lengthened to 5 May.
    c.decide('2026-05-01T00:00:00.000Z');
    c.decide('2026-05-04T23:59:59.999Z');
    expect(c.refills).toEqual([APR_1]);
    // The new anchor's next reset starts the next period: refilled once, then periods run from the new anchor.
    c.decide('2026-05-05T00:00:00.000Z');
    c.decide('2026-05-20T00:00:00.000Z');
    expect(c.refills).toEqual([APR_1, '2026-05-05T00:00:00.000Z']);
    expect(c.period('2026-06-05T00:00:00.000Z')).toEqual(['2026-06-05T00:00:00.000Z', '2026-07-05T00:00:00.000Z']);
  });

  it('a move to an earlier reset shortens the period in progress; the next one refills at its (earlier) start', () => {
    const c = new MonthlyRefills('2026-01-01T00:00:00.000Z');
    c.decide('2026-04-02T08:00:00.000Z');
    c.move('2026-01-15T00:00:00.000Z', '2026-04-10T12:00:00.000Z');
    expect(c.period('2026-04-10T12:00:00.000Z')).toEqual([APR_1, '2026-04-15T00:00:00.000Z']);
    c.decide('2026-04-14T23:59:59.999Z');
    expect(c.refills).toEqual([APR_1]);
    c.decide('2026-04-15T00:00:00.000Z');
    c.decide('2026-05-01T00:00:00.000Z');
    expect(c.refills).toEqual([APR_1, '2026-04-15T00:00:00.000Z']);
    expect(c.period('2026-05-01T00:00:00.000Z')).toEqual(['2026-04-15T00:00:00.000Z', '2026-05-15T00:00:00.000Z']);
  });

  it('two moves re-cut the same period: its start stays, its end is the last anchor’s next reset', () => {
    const c = new MonthlyRefills('2026-01-01T00:00:00.000Z');
    c.decide('2026-04-02T08:00:00.000Z');
    c.move('2026-01-05T00:00:00.000Z', '2026-04-10T12:00:00.000Z');
    c.decide('2026-04-10T13:00:00.000Z');
    c.move('2026-01-20T06:30:00.000Z', '2026-04-11T12:00:00.000Z');
    expect(c.period('2026-04-11T12:00:00.000Z')).toEqual([APR_1, '2026-04-20T06:30:00.000Z']);
    c.decide('2026-04-11T13:00:00.000Z');
    c.decide('2026-04-20T06:29:59.999Z');
    expect(c.refills).toEqual([APR_1]);
    c.decide('2026-04-20T06:30:00.000Z');
    expect(c.refills).toEqual([APR_1, '2026-04-20T06:30:00.000Z']);
  });

  it('three moves that each start the period later grant one refill for the period, not four', () => {
    const c = new MonthlyRefills('2026-01-01T00:00:00.000Z');
    c.decide('2026-04-10T11:00:00.000Z');
    for (const [day, hour] of [
      ['05', '12'],
      ['08', '13'],
      ['09', '14'],
    ]) {
      c.move(`2026-01-${day}T00:00:00.000Z`, `2026-04-10T${hour}:00:00.000Z`);
      c.decide(`2026-04-10T${hour}:00:01.000Z`);
    }
    expect(c.period('2026-04-30T00:00:00.000Z')).toEqual([APR_1, '2026-05-09T00:00:00.000Z']);
    c.decide('2026-05-08T23:59:59.999Z');
    expect(c.refills).toEqual([APR_1]);
    c.decide('2026-05-09T00:00:00.000Z');
    expect(c.refills).toEqual([APR_1, '2026-05-09T00:00:00.000Z']);
  });

  it('a period not yet refilled when the anchor moved (no decision in it before the move) still refills, once', () => {
    const c = new MonthlyRefills('2026-01-01T00:00:00.000Z');
    c.decide('2026-03-20T00:00:00.000Z');
    c.move('2026-01-05T00:00:00.000Z', '2026-04-10T12:00:00.000Z');
    c.move('2026-01-08T00:00:00.000Z', '2026-04-10T12:30:00.000Z');
    c.decide('2026-04-10T13:00:00.000Z');
    c.decide('2026-04-20T13:00:00.000Z');
    expect(c.refills).toEqual(['2026-03-01T00:00:00.000Z', APR_1]);
  });

  it('a move after the re-cut period ended cuts from the anchor in force; moving back to it undoes the re-cut', () => {
    const c = new MonthlyRefills('2026-01-01T00:00:00.000Z');
    c.move('2026-01-05T00:00:00.000Z', '2026-04-10T12:00:00.000Z');
    // 6 May: the re-cut ended on 5 May, the period in progress is the anchor's (5 May -> 5 Jun), now to 8 May.
    c.move('2026-01-08T00:00:00.000Z', '2026-05-06T00:00:00.000Z');
    expect(c.period('2026-05-06T00:00:00.000Z')).toEqual(['2026-05-05T00:00:00.000Z', '2026-05-08T00:00:00.000Z']);
    c.move('2026-01-05T00:00:00.000Z', '2026-05-07T00:00:00.000Z');
    expect(c.period('2026-05-07T00:00:00.000Z')).toEqual(['2026-05-05T00:00:00.000Z', '2026-06-05T00:00:00.000Z']);
  });

  it('a daily refill is unaffected by the anchor and its moves', () => {
    const recut = moveAnchor(
      at('2026-01-01T00:00:00.000Z'),
      null,
      at('2026-01-05T12:00:00.000Z'),
      at('2026-04-10T12:00:00.000Z'),
    ).recut;
    expect(recut).not.toBeNull();
    const p = refillPeriodAt('day', at('2026-01-05T12:00:00.000Z'), at('2026-04-10T15:00:00.000Z'), recut);
    expect([iso(p.startMs), iso(p.endMs)]).toEqual(['2026-04-10T00:00:00.000Z', '2026-04-11T00:00:00.000Z']);
  });
});
