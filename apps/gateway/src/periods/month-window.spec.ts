import type { Consumer } from '../consumers/consumer';
import { moveAnchor } from './billing-period';
import { monthWindowOf } from './month-window';

const at = (iso: string) => Date.parse(iso);
const DAY_MS = 86_400_000;

const consumer = (anchor: string, recut: Consumer['recutPeriod'] = null): Consumer => ({
  name: 'acme',
  plan: 'enterprise',
  limits: { perMinute: 1_000, perDay: 100_000, perMonth: 1_000_000 },
  billingAnchorMs: at(anchor),
  recutPeriod: recut,
});

describe('monthWindowOf', () => {
  it('is the anchor’s period without a move', () => {
    const month = monthWindowOf(consumer('2026-01-01T00:00:00.000Z'), at('2026-04-10T12:00:00.000Z'))!;
    expect(month.ttlMs).toBe(30 * DAY_MS);
    expect(month.period).toEqual({ endMs: at('2026-05-01T00:00:00.000Z'), nextEndMs: at('2026-06-01T00:00:00.000Z') });
  });

  it('after an anchor move, is the re-cut period while it lasts (its whole length is `w`), then the new anchor’s', () => {
    // 10 Apr: from the 1st to the 5th: the period in progress, 1 Apr -> 1 May, now ends on 5 May.
    const { recut } = moveAnchor(
      at('2026-01-01T00:00:00.000Z'),
      null,
      at('2026-01-05T00:00:00.000Z'),
      at('2026-04-10T12:00:00.000Z'),
    );
    const moved = consumer('2026-01-05T00:00:00.000Z', recut);
    const during = monthWindowOf(moved, at('2026-04-30T00:00:00.000Z'))!;
    expect(during.ttlMs).toBe(34 * DAY_MS);
    expect(during.period).toEqual({ endMs: at('2026-05-05T00:00:00.000Z'), nextEndMs: at('2026-06-05T00:00:00.000Z') });
    const after = monthWindowOf(moved, at('2026-05-05T00:00:00.000Z'))!;
    expect(after.ttlMs).toBe(31 * DAY_MS);
    expect(after.period).toEqual({ endMs: at('2026-06-05T00:00:00.000Z'), nextEndMs: at('2026-07-05T00:00:00.000Z') });
  });
});
