import { classifyAddress, isMetadataRefusal, type RefusalReason } from './address-policy';

function reasonOf(address: string): RefusalReason | 'allowed' {
  const verdict = classifyAddress(address);
  return verdict.allowed ? 'allowed' : verdict.reason;
}

describe('classifyAddress: refused address classes', () => {
  it('refuses IPv4 loopback, the whole 127.0.0.0/8', () => {
    expect(reasonOf('127.0.0.1')).toBe('loopback');
    expect(reasonOf('127.255.255.254')).toBe('loopback');
  });

  it('refuses IPv6 loopback ::1', () => {
    expect(reasonOf('::1')).toBe('loopback');
    expect(reasonOf('0:0:0:0:0:0:0:1')).toBe('loopback');
  });

  it('refuses 10.0.0.0/8', () => {
    expect(reasonOf('10.0.0.1')).toBe('private');
    expect(reasonOf('10.255.255.255')).toBe('private');
  });

  it('refuses 172.16.0.0/12, and only it', () => {
    expect(reasonOf('172.16.0.1')).toBe('private');
    expect(reasonOf('172.31.255.255')).toBe('private');
    expect(reasonOf('172.15.255.255')).toBe('allowed');
    expect(reasonOf('172.32.0.0')).toBe('allowed');
  });

  it('refuses 192.168.0.0/16', () => {
    expect(reasonOf('192.168.0.1')).toBe('private');
    expect(reasonOf('192.168.255.255')).toBe('private');
  });

  it('refuses IPv6 unique local fc00::/7', () => {
    expect(reasonOf('fc00::1')).toBe('private');
    expect(reasonOf('fd12:3456:789a::1')).toBe('private');
  });

  it('refuses IPv4 link-local 169.254.0.0/16', () => {
    expect(reasonOf('169.254.0.1')).toBe('link_local');
    expect(reasonOf('169.254.255.255')).toBe('link_local');
  });

  it('refuses IPv6 link-local fe80::/10', () => {
    expect(reasonOf('fe80::1')).toBe('link_local');
    expect(reasonOf('febf:ffff::1')).toBe('link_local');
  });

  it('refuses the cloud metadata addresses as metadata', () => {
    expect(reasonOf('169.254.169.254')).toBe('metadata');
    expect(reasonOf('169.254.170.2')).toBe('metadata');
    expect(reasonOf('100.100.100.200')).toBe('metadata');
    expect(reasonOf('fd00:ec2::254')).toBe('metadata');
    expect(isMetadataRefusal(classifyAddress('169.254.169.254'))).toBe(true);
    expect(isMetadataRefusal(classifyAddress('::ffff:169.254.169.254'))).toBe(true);
    expect(isMetadataRefusal(classifyAddress('169.254.1.1'))).toBe(false);
  });

  it('refuses carrier-grade NAT 100.64.0.0/10', () => {
    expect(reasonOf('100.64.0.1')).toBe('cgnat');
    expect(reasonOf('100.127.255.254')).toBe('cgnat');
    expect(reasonOf('100.128.0.1')).toBe('allowed');
  });

  it('refuses unspecified addresses: 0.0.0.0/8 and ::', () => {
    expect(reasonOf('0.0.0.0')).toBe('unspecified');
    expect(reasonOf('0.1.2.3')).toBe('unspecified');
    expect(reasonOf('::')).toBe('unspecified');
  });

  it('refuses IPv4 multicast 224.0.0.0/4', () => {
    expect(reasonOf('224.0.0.1')).toBe('multicast');
    expect(reasonOf('239.255.255.250')).toBe('multicast');
  });

  it('refuses IPv6 multicast ff00::/8', () => {
    expect(reasonOf('ff02::1')).toBe('multicast');
  });

  it('refuses the broadcast address', () => {
    expect(reasonOf('255.255.255.255')).toBe('broadcast');
  });

  it('refuses the documentation ranges (TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20)', () => {
    for (const address of ['192.0.2.1', '198.51.100.1', '203.0.113.1', '2001:db8::1', '3fff::1'])
      expect([address, reasonOf(address)]).toEqual([address, 'reserved']);
  });

  it('refuses the benchmarking ranges 198.18.0.0/15 and 2001:2::/48', () => {
    expect(reasonOf('198.18.0.1')).toBe('reserved');
    expect(reasonOf('198.19.255.255')).toBe('reserved');
    expect(reasonOf('2001:2::1')).toBe('reserved');
  });

  it('refuses IETF protocol assignments and future use: 192.0.0.0/24, 240.0.0.0/4', () => {
    expect(reasonOf('192.0.0.8')).toBe('reserved');
    expect(reasonOf('240.0.0.1')).toBe('reserved');
  });

  it('refuses IPv6 addresses outside global unicast 2000::/3 (discard prefix, site-local, unassigned)', () => {
    expect(reasonOf('100::1')).toBe('reserved');
    expect(reasonOf('4000::1')).toBe('reserved');
    expect(reasonOf('fec0::1')).toBe('private');
  });

  it('refuses what Node does not read as an address, and forms a connect would read differently', () => {
    expect(reasonOf('localhost')).toBe('not_an_address');
    expect(reasonOf('0x7f.1')).toBe('not_an_address');
    expect(reasonOf('127.1')).toBe('not_an_address');
    expect(reasonOf('2130706433')).toBe('not_an_address');
  });
});

describe('classifyAddress: IPv6 forms that carry an IPv4 address', () => {
  it('refuses an IPv4-mapped address of a refused IPv4, naming it', () => {
    expect(classifyAddress('::ffff:127.0.0.1')).toEqual({
      allowed: false,
      address: '::ffff:7f00:1',
      reason: 'embedded_ipv4',
      embedded: { address: '127.0.0.1', reason: 'loopback' },
    });
    expect(reasonOf('::ffff:10.0.0.1')).toBe('embedded_ipv4');
    expect(reasonOf('::ffff:a9fe:a9fe')).toBe('embedded_ipv4');
  });

  it('accepts an IPv4-mapped address of a public IPv4 (it is that IPv4 address)', () => {
    expect(reasonOf('::ffff:8.8.8.8')).toBe('allowed');
  });

  it('refuses an IPv4-compatible address (::a.b.c.d): of a refused IPv4 as embedded, of a public one outright', () => {
    const loopback = classifyAddress('::127.0.0.1');
    expect(loopback).toMatchObject({ reason: 'embedded_ipv4', embedded: { address: '127.0.0.1', reason: 'loopback' } });
    expect(reasonOf('::10.1.2.3')).toBe('embedded_ipv4');
    expect(reasonOf('::8.8.8.8')).toBe('transition');
  });

  it('refuses 6to4 (2002::/16): of a refused IPv4 as embedded, of a public one outright', () => {
    expect(classifyAddress('2002:7f00:1::1')).toMatchObject({
      reason: 'embedded_ipv4',
      embedded: { address: '127.0.0.1', reason: 'loopback' },
    });
    expect(classifyAddress('2002:c0a8:101::1')).toMatchObject({ embedded: { address: '192.168.1.1' } });
    expect(classifyAddress('2002:808:808::1')).toMatchObject({
      reason: 'transition',
      embedded: { address: '8.8.8.8' },
    });
  });

  it('refuses well-known NAT64 (64:ff9b::/96) of a refused IPv4, accepts it of a public one', () => {
    expect(classifyAddress('64:ff9b::127.0.0.1')).toMatchObject({
      reason: 'embedded_ipv4',
      embedded: { address: '127.0.0.1', reason: 'loopback' },
    });
    expect(classifyAddress('64:ff9b::a9fe:a9fe')).toMatchObject({ embedded: { reason: 'metadata' } });
    expect(reasonOf('64:ff9b::8.8.8.8')).toBe('allowed');
  });

  it('refuses local-use NAT64 (64:ff9b:1::/48): of a refused IPv4 as embedded, of a public one outright', () => {
    expect(reasonOf('64:ff9b:1::10.0.0.1')).toBe('embedded_ipv4');
    expect(reasonOf('64:ff9b:1::8.8.8.8')).toBe('transition');
  });

  it('refuses Teredo (2001::/32): a refused client or server IPv4 as embedded, else outright', () => {
    // Client 127.0.0.1 obfuscated (every bit flipped): 80ff:fffe; server 8.8.8.8.
    expect(classifyAddress('2001:0:808:808::80ff:fffe')).toMatchObject({
      reason: 'embedded_ipv4',
      embedded: { address: '127.0.0.1', reason: 'loopback' },
    });
    // Client 8.8.4.4 (f7f7:fbfb), server 10.0.0.1.
    expect(classifyAddress('2001:0:a00:1::f7f7:fbfb')).toMatchObject({
      reason: 'embedded_ipv4',
      embedded: { address: '10.0.0.1', reason: 'private' },
    });
    // Both public.
    expect(classifyAddress('2001:0:808:808::f7f7:fbfb')).toMatchObject({
      reason: 'transition',
      embedded: { address: '8.8.4.4' },
    });
  });

  it('refuses IPv4-translated addresses (::ffff:0:a.b.c.d)', () => {
    expect(reasonOf('::ffff:0:127.0.0.1')).toBe('embedded_ipv4');
    expect(reasonOf('::ffff:0:8.8.8.8')).toBe('transition');
  });
});

describe('classifyAddress: public addresses', () => {
  it.each(['8.8.8.8', '1.1.1.1', '93.184.215.14', '172.32.0.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'])(
    'accepts %s',
    (address) => {
      expect(classifyAddress(address)).toEqual({ allowed: true, address: expect.any(String) });
    },
  );
});
