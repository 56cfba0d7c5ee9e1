import { formatDuration, unbrokenTokens } from './helpers';

describe('formatDuration: seconds as a person reads them', () => {
  it.each([
    [0, '0 s'],
    [0.2, '1 s'],
    [42, '42 s'],
    [60, '1 min'],
    [185, '3 min 5 s'],
    [3_600, '1 h'],
    [86_162, '23 h 56 min'],
    [86_400, '1 d'],
    [187_200, '2 d 4 h'],
    [-1, '-1'],
  ])('%s -> %s', (seconds, shown) => {
    expect(formatDuration(seconds)).toBe(shown);
  });
});

describe('unbrokenTokens: free text that wraps between words, never inside one', () => {
  it('puts each word in a nobreak span, keeps the spaces between them, and escapes the text', () => {
    expect(unbrokenTokens('invoice 2026-11-0042 <paid>').toHTML()).toBe(
      '<span class="nobreak">invoice</span> <span class="nobreak">2026-11-0042</span> <span class="nobreak">&lt;paid&gt;</span>',
    );
    expect(unbrokenTokens('  a "b"  ').toHTML()).toBe(
      '  <span class="nobreak">a</span> <span class="nobreak">&quot;b&quot;</span>  ',
    );
    expect(unbrokenTokens(undefined).toHTML()).toBe('');
    expect(String(unbrokenTokens(42))).toBe('<span class="nobreak">42</span>');
  });
});
