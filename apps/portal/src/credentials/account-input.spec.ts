import { emailError, normalizeEmail, passwordError } from './account-input';

describe('account input', () => {
  it.each([
    'a,attacker\n@evil.test',
    'a,attacker@evil.test',
    'victim@example.com, attacker@evil.test',
    'Victim <victim@example.com>',
    '"quoted"@example.com',
    'two words@example.com',
    'tab\there@example.com',
    'nul\u0000@example.com',
    'line\r\nbcc@example.com',
    'victim@example.com\nbcc: attacker@evil.test',
    'a@b',
    'a@@example.com',
    '.a@example.com',
    'a..b@example.com',
    'a@[127.0.0.1]',
    'a@example.com (comment)',
    'ü@example.com',
  ])('refuses %j: one addr-spec, nothing else', (typed) => {
    expect(emailError(normalizeEmail(typed))).toBe('Enter an email address such as name@example.com.');
  });

  it.each(['dev@example.com', 'first.last+tag@sub.example.co.uk', "o'brien@example.org", '  Dev@Example.com\t'])(
    'accepts %j',
    (typed) => {
      expect(emailError(normalizeEmail(typed))).toBeUndefined();
    },
  );

  it('refuses common, blank and guessable passwords with a clear message, and accepts a phrase', () => {
    expect(passwordError('password1234')).toMatch(/most common/);
    expect(passwordError(' '.repeat(12))).toMatch(/more than spaces/);
    expect(passwordError('qwertyuiop12')).toMatch(/common|easy to guess/);
    expect(passwordError('dev@example.com1', 'dev@example.com')).toMatch(/easy to guess/);
    expect(passwordError('a long enough passphrase')).toBeUndefined();
    expect(passwordError('short')).toBe('Use at least 12 characters.');
  });
});
