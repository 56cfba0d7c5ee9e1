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
});
