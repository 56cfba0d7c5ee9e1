import { readFileSync } from 'node:fs';
import path from 'node:path';
import Handlebars from 'handlebars';
import { creditsPanel, policyCards } from './billing-views';
import { registerWebHelpers } from './helpers';
import { WEB_VIEWS } from './web-root';
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
  alerts: null,
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
      exhaustion: 'not-expected',
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

describe('the credits and policies partials', () => {
  const handlebars = Handlebars.create();
  registerWebHelpers(handlebars as unknown as Parameters<typeof registerWebHelpers>[0]);
  for (const name of ['usage', 'credits', 'policies'])
    handlebars.registerPartial(name, readFileSync(path.join(WEB_VIEWS, 'partials', `${name}.hbs`), 'utf8'));
  const render = (partial: string, model: unknown) =>
    handlebars.compile(`{{> ${partial} this}}`)(model, { data: { root: { base: '' } } });
  const credits = {
    balance: 1234,
    refill: { amount: 1000, every: 'day' as const },
    refillSet: false,
    nextRefillAt: '2026-11-28T00:00:00.000Z',
    costs: { listPets: 1, createPet: 5 },
  };
  const ledger: AdminCreditLedger = {
    balance: 1234,
    entries: [
      {
        id: '2',
        at: '2026-11-27T09:30:00.000Z',
        kind: 'top-up',
        amount: 500,
        balanceAfter: 1234,
        reason: 'Invoice 42',
        actor: 'oncall',
      },
      {
        id: '1',
        at: '2026-11-27T00:00:00.000Z',
        kind: 'refill',
        amount: 1000,
        balanceAfter: 1000,
        reason: null,
        actor: 'gateway',
      },
    ],
    spendPerDay: [{ day: '2026-11-27', spent: 266 }],
    projectedExhaustionAt: '2026-12-02T10:00:00.000Z',
    exhaustion: 'projected',
  };

  it('shows the balance, the refill, the projected exhaustion, the costs and the ledger in the one date format', () => {
    const html = render('credits', creditsPanel(credits, ledger));
    expect(html).toContain('<span data-testid="credits-balance">1,234</span>');
    expect(html).toContain("up to 1,000 every day (UTC) (the plan's)");
    expect(html).toContain('2026-12-02 10:00 UTC</time> at the last 7 days');
    expect(html).toMatch(/<code[^>]*>createPet<\/code><\/th><td>5<\/td>/);
    // The ledger's body rows (the header row first) as their cells read: words sit in no-break spans, cells carry labels.
    const table = /<table data-testid="credits-ledger"[\s\S]*?<\/table>/.exec(html)?.[0] ?? '';
    const rows = [...table.matchAll(/<tr role="row">([\s\S]*?)<\/tr>/g)]
      .slice(1)
      .map((row) => [...row[1].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => cell[1].replace(/<[^>]+>/g, '')));
    expect(rows).toEqual([
      ['2026-11-27 09:30 UTC', 'top-up', '500', '1,234', 'Invoice 42', 'oncall'],
      ['2026-11-27 00:00 UTC', 'refill', '1,000', '1,000', '', 'gateway'],
    ]);
  });

  it('leaves the history out when the ledger could not be read, and says the exhaustion is not known then', () => {
    const html = render('credits', creditsPanel({ ...credits, refill: null }, null));
    expect(html).not.toContain('credits-ledger');
    expect(html).toContain('data-testid="credits-exhaustion">not known: the spend history could not be read</dd>');
    expect(
      render('credits', creditsPanel(credits, { ...ledger, projectedExhaustionAt: null, exhaustion: 'not-expected' })),
    ).toContain('not expected');
    expect(html).toContain('<dd data-testid="credits-refill">none</dd>');
  });

  it('says "not within any date" for a projection past the last date, never a date nor "not expected"', () => {
    const beyond = { ...ledger, projectedExhaustionAt: null, exhaustion: 'not-within-any-date' as const };
    const html = render('credits', creditsPanel(credits, beyond));
    expect(html).toMatch(/data-testid="credits-exhaustion">not within any date at the last 7 days(&#x27;|')/);
    expect(html).not.toContain('not expected');
  });

  it('says "exhausted until <the next refill>" at a balance of 0, or "exhausted" without one, never a date of now', () => {
    const zero = { ...credits, balance: 0 };
    // As an older gateway answers at 0 (the projection from a spend above the refill: now), and as this one does.
    const projectedNow = { ...ledger, balance: 0, projectedExhaustionAt: now.toISOString() };
    for (const answer of [
      projectedNow,
      { ...projectedNow, projectedExhaustionAt: null, exhaustion: 'exhausted' as const },
      null,
    ]) {
      const html = render('credits', creditsPanel(zero, answer));
      expect(/data-testid="credits-exhaustion">(.*?)<\/dd>/.exec(html)?.[1]).toBe(
        'exhausted until <time datetime="2026-11-28T00:00:00.000Z">2026-11-28 00:00 UTC</time>',
      );
    }
    const none = render('credits', creditsPanel({ ...zero, refill: null, nextRefillAt: null }, projectedNow));
    expect(none).toContain('data-testid="credits-exhaustion">exhausted</dd>');
  });

  it('gives each policy its remaining, used and reset date; credits without a refill say only a top-up helps', () => {
    const html = render(
      'policies',
      policyCards(usage, { ...billing, credits: { ...credits, nextRefillAt: null } }, ledger, now),
    );
    expect(html).toContain('data-testid="month-resets-at">2026-12-31 09:00 UTC</time>');
    expect(html).toContain('<span data-testid="credits-remaining">1,234</span> credits left');
    expect(html).toContain('none scheduled: only a top-up adds credits');
  });
});
