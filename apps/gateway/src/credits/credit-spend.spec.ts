import { CreditSpendRecorder, utcDay } from './credit-spend';

const NOON = Date.parse('2026-11-29T12:00:00Z');

describe('CreditSpendRecorder', () => {
  it('keeps a drained batch pending until it is written, so no reader sees it vanish mid-flush', () => {
    const spend = new CreditSpendRecorder();
    spend.add('acme', 3, NOON);
    spend.add('acme', 2, NOON);
    const rows = spend.drain();
    expect(rows).toEqual([{ consumer: 'acme', day: '2026-11-29', spent: 5 }]);
    spend.add('acme', 1, NOON);
    // Being written and newly held: both still this instance's.
    expect(spend.pending('acme')).toBe(6);
    expect(spend.pendingOn('acme', utcDay(NOON))).toBe(6);
    spend.written(rows);
    expect(spend.pending('acme')).toBe(1);
  });

  it('holds a batch that could not be written again, once', () => {
    const spend = new CreditSpendRecorder();
    spend.add('acme', 4, NOON);
    spend.add('globex', 1, NOON);
    const rows = spend.drain();
    spend.restore(rows);
    expect(spend.pending('acme')).toBe(4);
    expect(spend.pending('globex')).toBe(1);
    expect(spend.drain()).toEqual(rows);
  });
});
