import { AddressRestriction, normalizedAddressList, normalizedRange } from './allowed-addresses';

describe('allowed addresses', () => {
  it('stores a range on its network address, a lone address as its /32 or /128, IPv6 short', () => {
    expect(normalizedRange('10.1.2.3/16')).toBe('10.1.0.0/16');
    expect(normalizedRange('203.0.113.7')).toBe('203.0.113.7/32');
    expect(normalizedRange('2001:DB8:0:0::/32')).toBe('2001:db8::/32');
    expect(normalizedRange('2001:db8::1')).toBe('2001:db8::1/128');
    expect(normalizedRange(' 0.0.0.0/0 ')).toBe('0.0.0.0/0');
  });

  it('stores an IPv4-mapped IPv6 range as the IPv4 range it means, which IPv4 clients then match', () => {
    expect(normalizedRange('::ffff:10.1.2.3/112')).toBe('10.1.0.0/16');
    expect(normalizedRange('::ffff:203.0.113.7')).toBe('203.0.113.7/32');
    expect(normalizedRange('::FFFF:0:0/96')).toBe('0.0.0.0/0');
    expect(normalizedRange('::ffff:a01:0/120')).toBe('10.1.0.0/24');
    // Wider than the mapped block: an IPv6 range, kept as written.
    expect(normalizedRange('::ffff:0:0/95')).toBe('::fffe:0:0/95');
    expect(normalizedAddressList(['::ffff:10.1.0.0/112', '10.1.0.0/16'])).toEqual(['10.1.0.0/16']);
    const mapped = AddressRestriction.of(normalizedAddressList(['::ffff:10.1.0.0/112'])!, null)!;
    expect(mapped.allows('10.1.2.3')).toBe(true);
    expect(mapped.allows('::ffff:10.1.2.3')).toBe(true);
    expect(mapped.allows('10.2.0.1')).toBe(false);
  });

  it('refuses what is neither an address nor a range', () => {
    for (const bad of [
      '10.1',
      '0x0a.0.0.1/8',
      '10.0.0.0/33',
      '2001:db8::/129',
      '10.0.0.0/8/8',
      '10.0.0.0/x',
      'host',
      '',
      7,
    ])
      expect(normalizedRange(bad)).toBeUndefined();
  });

  it('takes null (anywhere) or 1 to 100 entries, each once; not an empty list', () => {
    expect(normalizedAddressList(null)).toBeNull();
    expect(normalizedAddressList(['10.1.0.0/16', '10.1.9.9/16', '2001:db8::/32'])).toEqual([
      '10.1.0.0/16',
      '2001:db8::/32',
    ]);
    expect(normalizedAddressList([])).toBeUndefined();
    expect(normalizedAddressList('10.0.0.0/8')).toBeUndefined();
    expect(normalizedAddressList(Array.from({ length: 101 }, (_, i) => `10.0.${i}.0/24`))).toBeUndefined();
    expect(normalizedAddressList(['10.0.0.0/8', 'nope'])).toBeUndefined();
  });

  it("allows a request from inside both the consumer's ranges and the credential's, IPv4 and IPv6", () => {
    const consumerOnly = AddressRestriction.of(['10.1.0.0/16', '2001:db8::/32'], null)!;
    expect(consumerOnly.allows('10.1.200.3')).toBe(true);
    expect(consumerOnly.allows('::ffff:10.1.200.3')).toBe(true);
    expect(consumerOnly.allows('2001:db8:ffff::1')).toBe(true);
    expect(consumerOnly.allows('10.2.0.1')).toBe(false);
    expect(consumerOnly.allows('2001:db9::1')).toBe(false);
    expect(consumerOnly.allows('fe80::1%eth0')).toBe(false);
    expect(consumerOnly.allows(undefined)).toBe(false);
    expect(consumerOnly.allows('not-an-ip')).toBe(false);
    const both = AddressRestriction.of(['10.1.0.0/16'], ['10.1.5.0/24'])!;
    expect(both.allows('10.1.5.9')).toBe(true);
    expect(both.allows('10.1.6.9')).toBe(false);
    expect(AddressRestriction.of(null, ['10.1.5.0/24'])!.allows('10.1.5.9')).toBe(true);
    expect(AddressRestriction.of(null, null)).toBeUndefined();
  });
});
