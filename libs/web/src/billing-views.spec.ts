import { creditsPanel, policyCards } from './billing-views';
import type { AdminBilling, AdminCreditLedger, AdminCurrentUsage } from './admin-api-types';

const now = new Date('2026-11-27T10:00:00.000Z');
const usage: AdminCurrentUsage = {
  consumer: 'acme',
  plan: 'pro',
  banned: false,
  banSecondsLeft: null,
  windows: [
    { name: 'minute', limit: 300, used: 3, remaining: 297, resetSeconds: 42 },
    { name: 'day', limit: 10_000, used: 3, remaining: 9997, resetSeconds: 86_000 },
    { name: 'month', limit: 200_000, used: 3, remaining: 199_997, resetSeconds: 400_000 },
  ],
};
const billing: AdminBilling = {
  consumer: 'acme',
  billingAnchor: '2026-01-31T09:00:00.000Z',
  anchorSet: true,
  ownPerMonth: null,
  perMonth: 200_000,
  currentPeriod: { start: '2026-11-30T09:00:00.000Z', end: '2026-12-31T09:00:00.000Z' },
  credits: null,
};

describe('policyCards', () => {
  it("gives each window the admin API's figures, its reset as now + its seconds, the month's as the period's end", () => {
    const cards = policyCards(usage, billing, null, now);
    expect(cards.map((c) => [c.name, c.used, c.remaining, c.limit, c.resetsAt])).toEqual([
      ['minute', 3, 297, 300, '2026-11-27T10:00:42.000Z'],
      ['day', 3, 9997, 10_000, '2026-11-28T09:53:20.000Z'],
      ['month', 3, 199_997, 200_000, '2026-12-31T09:00:00.000Z'],
    ]);
  });

  it('adds the credits only when they are in force: the balance, today’s spend and the next refill', () => {
    const ledger: AdminCreditLedger = {
      balance: 120,
      entries: [],
      spendPerDay: [
        { day: '2026-11-26', spent: 10 },
        { day: '2026-11-27', spent: 7 },
      ],
      projectedExhaustionAt: null,
    };
    const credits = { balance: 120, refill: null, refillSet: false, nextRefillAt: null, costs: { listPets: 1 } };
    const cards = policyCards(usage, { ...billing, credits }, ledger, now);
    expect(cards.at(-1)).toMatchObject({ name: 'credits', used: 7, remaining: 120, limit: null, resetsAt: null });
    expect(policyCards(usage, billing, null, now).some((c) => c.name === 'credits')).toBe(false);
    expect(creditsPanel(credits, ledger).spend?.rows.map((r) => [r.label, r.values])).toEqual([
      ['2026-11-26', [10]],
      ['2026-11-27', [7]],
    ]);
  });
});
