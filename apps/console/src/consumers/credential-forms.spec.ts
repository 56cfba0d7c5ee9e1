import { addressListFrom, addressListText } from './credential-forms';

describe('allowed-addresses fields', () => {
  it('splits what was typed on spaces, commas and new lines; empty is anywhere', () => {
    expect(addressListFrom('10.1.0.0/16, 2001:db8::/32\n 192.0.2.7')).toEqual([
      '10.1.0.0/16',
      '2001:db8::/32',
      '192.0.2.7',
    ]);
    expect(addressListFrom('  ')).toBeNull();
    expect(addressListFrom('')).toBeNull();
    // Judged by the admin API, not here: what is not an address is sent as typed.
    expect(addressListFrom('nope')).toEqual(['nope']);
  });

  it('shows a stored list as the form holds it', () => {
    expect(addressListText(['10.1.0.0/16', '2001:db8::/32'])).toBe('10.1.0.0/16, 2001:db8::/32');
    expect(addressListText(null)).toBe('');
  });
});
