import { randomBytes } from 'node:crypto';
import { minute, noBan, seededCredits as credits, storeEngines, useStore } from '../../support/rate-limit-stores';

const engines = storeEngines('credits-store', 'open');

describe.each(engines)('prepaid credits in the $name store', ({ create }) => {
  const store = useStore(create);
  const tracker = () => `consumer:c-${randomBytes(4).toString('hex')}`;

  it.each([
    [1, 100],
    [5, 20],
  ])(
    'a burst of 1,000 at cost %i with 100 credits admits exactly %i; the balance ends at 0',
    async (cost, admitted) => {
      const key = tracker();
      const { spec, calls } = credits(cost, { balance: 100, refilledPeriodStartMs: 0 });
      const decisions = await Promise.all(
        Array.from({ length: 1_000 }, () => store().consume(key, [minute(10_000)], noBan, spec)),
      );
      expect(decisions.filter((d) => d.outcome === 'allowed')).toHaveLength(admitted);
      // No refill scheduled: every other answer is "exhausted", none "limited".
      expect(decisions.filter((d) => d.outcome === 'exhausted')).toHaveLength(1_000 - admitted);
      expect(Math.min(...decisions.map((d) => d.credits!.balance))).toBe(0);
      expect((await store().credits(key, { read: true }, spec.rebuild)).after).toBe(0);
      // The refused requests counted nothing in the minute window.
      expect((await store().usage(key, [minute(10_000)])).windows[0].count).toBe(admitted);
      // Rebuilt at most once per racing decision, never once the store holds a balance.
      const before = calls.rebuilds;
      await store().consume(key, [minute(10_000)], noBan, spec);
      expect(calls.rebuilds).toBe(before);
    },
  );

  it('a refusal by a window spends no credit', async () => {
    const key = tracker();
    const { spec } = credits(3, { balance: 50, refilledPeriodStartMs: 0 });
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i += 1) outcomes.push((await store().consume(key, [minute(2)], noBan, spec)).outcome);
    expect(outcomes).toEqual(['allowed', 'allowed', 'limited', 'limited', 'limited']);
    expect((await store().credits(key, { read: true }, spec.rebuild)).after).toBe(44);
  });

  it('a refill tops up once per period, names the policy with Retry-After to the refill', async () => {
    const key = tracker();
    const refill = { amount: 10, periodStartMs: 1_000, periodMs: 86_400_000, waitMs: 3_600_000 };
    const { spec } = credits(4, { balance: 2, refilledPeriodStartMs: 0 }, refill);
    const first = await store().consume(key, [minute(100)], noBan, spec);
    // 2 rebuilt, topped up to 10 (the ledger's row: +8), less 4.
    expect(first.credits).toMatchObject({
      balance: 6,
      refilled: { amount: 8, balanceAfter: 10, periodStartMs: 1_000 },
    });
    const second = await store().consume(key, [minute(100)], noBan, spec);
    expect(second.credits?.refilled).toBeUndefined();
    expect(second.credits?.balance).toBe(2);
    const refused = await store().consume(key, [minute(100)], noBan, spec);
    expect(refused).toMatchObject({ outcome: 'limited', window: 'credits', retryAfterMs: 3_600_000 });
    expect(refused.credits?.balance).toBe(2);
    // The next period: one refill, whatever number of decisions see the boundary at once.
    const next = { ...spec, refill: { ...refill, periodStartMs: 2_000 } };
    const racing = await Promise.all(
      Array.from({ length: 20 }, () => store().consume(key, [minute(100)], noBan, next)),
    );
    expect(racing.filter((d) => d.credits?.refilled)).toHaveLength(1);
    expect(racing.filter((d) => d.outcome === 'allowed')).toHaveLength(2);
  });

  it('a refill below the cost can never pay for it: exhausted (402), not limited with a Retry-After to the refill', async () => {
    const key = tracker();
    const refill = { amount: 5, periodStartMs: 1_000, periodMs: 86_400_000, waitMs: 3_600_000 };
    const { spec } = credits(10, { balance: 3, refilledPeriodStartMs: 0 }, refill);
    const refused = await store().consume(key, [minute(100)], noBan, spec);
    // Topped up to 5 by the refill, still short of 10: waiting for the next refill would never help.
    expect(refused).toMatchObject({ outcome: 'exhausted', credits: { balance: 5 } });
    // A cost the refill covers is the usual 429 to the refill.
    const covered = { ...spec, cost: 5 };
    expect(await store().consume(key, [minute(100)], noBan, covered)).toMatchObject({ outcome: 'allowed' });
    expect(await store().consume(key, [minute(100)], noBan, covered)).toMatchObject({
      outcome: 'limited',
      window: 'credits',
      retryAfterMs: 3_600_000,
    });
  });

  it('a rebuilt balance keeps its last refilled period: no second refill of the same period', async () => {
    const key = tracker();
    const refill = { amount: 1_000, periodStartMs: 5_000, periodMs: 86_400_000, waitMs: 1_000 };
    const { spec } = credits(1, { balance: 7, refilledPeriodStartMs: 5_000 }, refill);
    const decision = await store().consume(key, [minute(100)], noBan, spec);
    expect(decision.credits).toMatchObject({ balance: 6 });
    expect(decision.credits?.refilled).toBeUndefined();
  });

  it('top-ups and sets outside a decision: add, set, drop', async () => {
    const key = tracker();
    const rebuild = async () => ({ balance: 3, refilledPeriodStartMs: 0 });
    expect(await store().credits(key, { add: 10 }, rebuild)).toEqual({ before: 3, after: 13 });
    expect(await store().credits(key, { set: 5 }, rebuild)).toEqual({ before: 13, after: 5 });
    expect(await store().credits(key, { set: null }, rebuild)).toEqual({ before: 5, after: null });
    // Dropped: the next read rebuilds.
    expect(await store().credits(key, { read: true }, async () => ({ balance: 0, refilledPeriodStartMs: 0 }))).toEqual({
      before: 0,
      after: 0,
    });
  });
});
