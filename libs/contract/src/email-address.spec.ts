import { EMAIL_ADDRESS_MAX_LENGTH, isEmailAddress, normalizeEmailAddress } from './email-address';

describe('isEmailAddress (one addr-spec, the portal’s and the admin API’s rule)', () => {
  it.each(['ada@example.com', 'Ada.Lovelace+api@mail.example.co.uk', 'x@y.io'])('accepts %s', (address) => {
    expect(isEmailAddress(address)).toBe(true);
  });

  it.each([
    ['a display name', 'Ada <ada@example.com>'],
    ['a list', 'ada@example.com,bob@example.com'],
    ['a space', 'ada lovelace@example.com'],
    ['a tab', 'ada\t@example.com'],
    ['a NUL', 'ada\u0000@example.com'],
    ['a DEL', 'ada\u007f@example.com'],
    ['a C1 control', 'ada\u0085@example.com'],
    ['two @', 'ada@@example.com'],
    ['no TLD', 'ada@example'],
    ['an empty local part', '@example.com'],
    ['too long', `${'a'.repeat(64)}@${'b'.repeat(EMAIL_ADDRESS_MAX_LENGTH - 64 - 1 - 7)}.example`],
  ])('refuses %s', (_what, address) => {
    expect(isEmailAddress(address)).toBe(false);
  });

  it('lower-cases for storage and comparison', () => {
    expect(normalizeEmailAddress('Ada@Example.COM')).toBe('ada@example.com');
  });
});
