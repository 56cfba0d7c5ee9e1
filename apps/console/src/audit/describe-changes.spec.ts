import { describeChanges } from './describe-changes';

describe('describeChanges', () => {
  it('writes instants in the date format of every page, other values as JSON', () => {
    expect(
      describeChanges({
        expiresAt: { before: null, after: '2026-11-27T17:20:04.161Z' },
        plan: { before: 'free', after: 'pro' },
      }),
    ).toBe('expiresAt: null → 2026-11-27 17:20 UTC; plan: "free" → "pro"');
  });

  it('writes lists and objects with a space between their items, so a cell wraps between them', () => {
    expect(
      describeChanges({
        scopes: { before: null, after: ['consumers:read', 'usage:read'] },
        creditRefill: { before: { amount: 5, every: 'day' }, after: null },
      }),
    ).toBe('scopes: null → ["consumers:read", "usage:read"]; creditRefill: {"amount": 5, "every": "day"} → null');
  });
});
