import { addressBlock } from './address-block';

describe('addressBlock', () => {
  it('keeps an IPv4 address (plain or IPv4-mapped) as it is', () => {
    expect(addressBlock('203.0.113.7')).toBe('203.0.113.7');
    expect(addressBlock('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts every address of one IPv6 /64 as one, and two /64s apart', () => {
    const a = addressBlock('2001:db8:1:2::1');
    expect(a).toBe('2001:db8:1:2::/64');
    expect(addressBlock('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(a);
    expect(addressBlock('2001:DB8:1:2:0:0:0:abcd%eth0')).toBe(a);
    expect(addressBlock('2001:db8:1:3::1')).not.toBe(a);
  });

  it('answers one shared block for anything that is not an address', () => {
    expect(addressBlock(undefined)).toBe('unknown');
    expect(addressBlock('not-an-address')).toBe('unknown');
  });
});
