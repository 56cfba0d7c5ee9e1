import { anchorMoveOf, recutPeriodOf } from './consumer';

const date = (iso: string) => new Date(iso);

/** A stored consumer created on 31 Jan 09:00 (its anchor until one is set), as docs/billing.md's Acme. */
const acme = (overrides: Partial<Parameters<typeof anchorMoveOf>[0]> = {}) => ({
  billingAnchor: null,
  createdAt: date('2026-01-31T09:00:00.000Z'),
  recutPeriodStart: null,
  recutPeriodEnd: null,
  ...overrides,
});

describe('anchorMoveOf', () => {
  it('docs/billing.md’s worked example: period 3 keeps its start and now ends at the new anchor’s reset', () => {
    const move = anchorMoveOf(acme(), date('2026-04-15T00:00:00.000Z'), Date.parse('2026-04-10T12:00:00.000Z'));
    expect(move.columns).toEqual({
      recutPeriodStart: date('2026-03-31T09:00:00.000Z'),
      recutPeriodEnd: date('2026-04-15T00:00:00.000Z'),
    });
    expect(move.changes).toEqual({
      billingPeriod: {
        before: { start: '2026-03-31T09:00:00.000Z', end: '2026-04-30T09:00:00.000Z' },
        after: { start: '2026-03-31T09:00:00.000Z', end: '2026-04-15T00:00:00.000Z' },
      },
    });
  });

  it('a second move re-cuts the re-cut period; back to the creation time (null) undoes it', () => {
    const moved = acme({
      billingAnchor: date('2026-04-15T00:00:00.000Z'),
      recutPeriodStart: date('2026-03-31T09:00:00.000Z'),
      recutPeriodEnd: date('2026-04-15T00:00:00.000Z'),
    });
    const again = anchorMoveOf(moved, date('2026-01-20T00:00:00.000Z'), Date.parse('2026-04-11T00:00:00.000Z'));
    expect(recutPeriodOf(again.columns)).toEqual({
      startMs: Date.parse('2026-03-31T09:00:00.000Z'),
      endMs: Date.parse('2026-04-20T00:00:00.000Z'),
    });
    const back = anchorMoveOf(moved, null, Date.parse('2026-04-11T00:00:00.000Z'));
    expect(back.columns).toEqual({ recutPeriodStart: null, recutPeriodEnd: null });
    expect(back.changes.billingPeriod?.after).toEqual({
      start: '2026-03-31T09:00:00.000Z',
      end: '2026-04-30T09:00:00.000Z',
    });
  });

  it('a move that leaves the period in progress as it was records no re-cut and no billingPeriod change', () => {
    // The same day and time a year earlier: the same periods.
    const move = anchorMoveOf(acme(), date('2025-01-31T09:00:00.000Z'), Date.parse('2026-04-10T12:00:00.000Z'));
    expect(move).toEqual({ columns: { recutPeriodStart: null, recutPeriodEnd: null }, changes: {} });
  });
});
