import { addressTracker, ClientAddressResolver } from './client-address';

const request = (remoteAddress: string, forwarded?: string | string[]) =>
  ({ socket: { remoteAddress }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as never;

describe('addressTracker', () => {
  it('keeps IPv4 as it is and unwraps IPv4-mapped IPv6', () => {
    expect(addressTracker('203.0.113.7')).toBe('203.0.113.7');
    expect(addressTracker('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts IPv6 by its /64, whatever the spelling', () => {
    expect(addressTracker('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressTracker('2001:DB8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(addressTracker('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressTracker('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressTracker('::1')).toBe('0:0:0:0::/64');
    expect(addressTracker('64:ff9b::192.0.2.33')).toBe('64:ff9b:0:0::/64');
  });

  it('refuses what is not an address', () => {
    for (const garbage of ['not-an-ip-7', '', '1.2.3', '999.1.1.1', '[::1]', '1.2.3.4:80', 'x'.repeat(8000)]) {
      expect(addressTracker(garbage)).toBeUndefined();
    }
  });
});

describe('ClientAddressResolver', () => {
  it('without trusted proxies ignores X-Forwarded-For', () => {
    const resolver = ClientAddressResolver.fromSetting(false);
    expect(resolver.resolve(request('::ffff:198.51.100.1', '203.0.113.9'))).toBe('198.51.100.1');
  });

  it('with one hop takes only the entry the proxy appended (the last), not what the client wrote before it', () => {
    const resolver = ClientAddressResolver.fromSetting(1);
    expect(resolver.resolve(request('10.0.0.2', '1.1.1.1, 2.2.2.2, 203.0.113.9'))).toBe('203.0.113.9');
    expect(resolver.resolve(request('10.0.0.2', ['1.1.1.1', '203.0.113.9']))).toBe('203.0.113.9');
    expect(resolver.resolve(request('10.0.0.2'))).toBe('10.0.0.2');
  });

  it('with two hops takes the entry the outer proxy appended', () => {
    const resolver = ClientAddressResolver.fromSetting(2);
    expect(resolver.resolve(request('10.0.0.2', 'forged, 203.0.113.9, 10.0.0.1'))).toBe('203.0.113.9');
    expect(resolver.resolve(request('10.0.0.2', '203.0.113.9'))).toBe('203.0.113.9');
  });

  it('counts garbage against the socket address', () => {
    const resolver = ClientAddressResolver.fromSetting(1);
    expect(resolver.resolve(request('10.0.0.2', 'not-an-ip-7'))).toBe('10.0.0.2');
    expect(resolver.resolve(request('10.0.0.2', `${'x'.repeat(8000)}`))).toBe('10.0.0.2');
  });

  it('with addresses walks back only through trusted proxies', () => {
    const resolver = ClientAddressResolver.fromSetting('10.0.0.0/8');
    // From a trusted balancer: the first untrusted address from the right is the client.
    expect(resolver.resolve(request('10.0.0.2', '6.6.6.6, 203.0.113.9, 10.1.1.1'))).toBe('203.0.113.9');
    // From anyone else: the header is not believed.
    expect(resolver.resolve(request('198.51.100.1', '203.0.113.9'))).toBe('198.51.100.1');
    // Garbage on the trusted path: the socket address counts.
    expect(resolver.resolve(request('10.0.0.2', '203.0.113.9, not-an-ip-7'))).toBe('10.0.0.2');
    // Every hop trusted: the furthest.
    expect(resolver.resolve(request('10.0.0.2', '10.3.3.3, 10.1.1.1'))).toBe('10.3.3.3');
  });

  it('groups IPv6 clients by /64 and IPv4-mapped sockets as IPv4', () => {
    const resolver = ClientAddressResolver.fromSetting('loopback');
    expect(resolver.resolve(request('::ffff:127.0.0.1', '2001:db8:1:2::99'))).toBe('2001:db8:1:2::/64');
    expect(resolver.resolve(request('::1', '2001:db8:1:2::7'))).toBe('2001:db8:1:2::/64');
  });
});
