import { randomBytes } from 'node:crypto';
import { Decision, WindowSpec } from '../../../apps/gateway/src/rate-limit/rate-limit-store';
import { minute, noBan, storeEngines, useStore } from '../../support/rate-limit-stores';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MONTH = 30 * 86_400_000;

/** A month window whose period ends `endInMs` from now (and the next one a month after that). */
const month = (limit: number, endInMs: number, nextInMs = endInMs + MONTH): WindowSpec => ({
  name: 'month',
  limit,
  ttlMs: MONTH,
  period: { endMs: Date.now() + endInMs, nextEndMs: Date.now() + nextInMs },
});
const counts = (decision: Decision) => Object.fromEntries(decision.windows.map((w) => [w.name, w.count]));

const engines = storeEngines('monthly-quota-store', 'closed');

describe.each(engines)('a monthly quota in the $name store', ({ create }) => {
  const store = useStore(create);
  const tracker = () => `consumer:m-${randomBytes(4).toString('hex')}`;

  it('admits exactly the monthly quota, decided with the minute window, and a refusal consumes from none', async () => {
    const key = tracker();
    const windows = [minute(100), month(5, 10 * 86_400_000)];
    const outcomes: string[] = [];
    for (let i = 0; i < 8; i += 1) outcomes.push((await store().consume(key, windows, noBan)).outcome);
    expect(outcomes).toEqual(['allowed', 'allowed', 'allowed', 'allowed', 'allowed', 'limited', 'limited', 'limited']);
    const refused = await store().consume(key, windows, noBan);
    expect(refused).toMatchObject({ outcome: 'limited', window: 'month' });
    // The refusals by the month counted nothing in the minute window.
    expect(counts(refused)).toEqual({ minute: 5, month: 5 });
    // Retry-After is the period's end: ten days away.
    if (refused.outcome === 'limited') expect(Math.abs(refused.retryAfterMs - 10 * 86_400_000)).toBeLessThan(60_000);

    // And a refusal by the minute window counts nothing in the month.
    const other = tracker();
    const tight = [minute(2), month(100, 10 * 86_400_000)];
    for (let i = 0; i < 5; i += 1) await store().consume(other, tight, noBan);
    expect((await store().usage(other, tight)).windows.map((w) => w.count)).toEqual([2, 2]);
  });

  it('ends the count with the billing period: the next period starts from zero', async () => {
    const key = tracker();
    const windows = () => [month(2, 600)];
    await store().consume(key, windows(), noBan);
    await store().consume(key, windows(), noBan);
    expect((await store().consume(key, windows(), noBan)).outcome).toBe('limited');
    await sleep(900);
    // The gateway's clock may lag the store's: the period it names may have ended; the store takes the next one.
    const next = await store().consume(key, [month(2, -300, MONTH)], noBan);
    expect(next.outcome).toBe('allowed');
    expect(counts(next)).toEqual({ month: 1 });
    expect(Math.abs(next.windows[0].resetMs - MONTH)).toBeLessThan(60_000);
  });

  it('moving the anchor re-cuts the period in progress: its count is kept, its end is the new one', async () => {
    const key = tracker();
    for (let i = 0; i < 3; i += 1) await store().consume(key, [month(5, 20 * 86_400_000)], noBan);
    // The anchor moves: the period in progress now ends in 2 days (or 25), with the 3 requests it has counted.
    const sooner = await store().consume(key, [month(5, 2 * 86_400_000)], noBan);
    expect(counts(sooner)).toEqual({ month: 4 });
    expect(Math.abs(sooner.windows[0].resetMs - 2 * 86_400_000)).toBeLessThan(60_000);
    const later = await store().consume(key, [month(5, 25 * 86_400_000)], noBan);
    expect(counts(later)).toEqual({ month: 5 });
    expect((await store().consume(key, [month(5, 25 * 86_400_000)], noBan)).outcome).toBe('limited');
    const usage = await store().usage(key, [month(5, 25 * 86_400_000)]);
    expect(usage.windows[0].count).toBe(5);
    expect(Math.abs(usage.windows[0].resetMs - 25 * 86_400_000)).toBeLessThan(60_000);
  });

  it('admits exactly the quota of a concurrent burst', async () => {
    const key = tracker();
    const windows = [minute(1_000), month(37, 10 * 86_400_000)];
    const decisions = await Promise.all(Array.from({ length: 300 }, () => store().consume(key, windows, noBan)));
    expect(decisions.filter((d) => d.outcome === 'allowed')).toHaveLength(37);
    expect((await store().usage(key, windows)).windows.map((w) => w.count)).toEqual([37, 37]);
  });
});
