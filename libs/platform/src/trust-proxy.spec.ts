import { expressTrustProxy, parseTrustProxy } from './trust-proxy';

describe('parseTrustProxy', () => {
  it('refuses true, which would believe any client, with one sentence', () => {
    expect(parseTrustProxy('true')).toMatch(/^TRUST_PROXY=true believes any X-Forwarded-For/);
  });

  it('reads nothing, hop counts, addresses, subnets and Express names', () => {
    expect(parseTrustProxy('false')).toEqual({ kind: 'none' });
    expect(parseTrustProxy('0')).toEqual({ kind: 'none' });
    expect(parseTrustProxy('2')).toEqual({ kind: 'hops', hops: 2 });
    expect(parseTrustProxy('10.0.0.0/8, 192.0.2.1, 2001:db8::/32, loopback')).toMatchObject({ kind: 'subnets' });
  });

  it.each(['10.0.0.0/33', 'proxy.internal', '10.0.0.0/8/1', '2001:db8::/129', 'loopbacks'])('refuses %s', (value) => {
    expect(parseTrustProxy(value)).toMatch(/^TRUST_PROXY must be false, a hop count, or a comma-separated list/);
  });
});

describe('expressTrustProxy', () => {
  it('gives Express a hop count as a number (the string "1" would be the address 0.0.0.1), names as they are', () => {
    expect(expressTrustProxy('1')).toBe(1);
    expect(expressTrustProxy('loopback')).toBe('loopback');
    expect(expressTrustProxy('false')).toBe(false);
  });

  it('names the variable it reads in a refusal', () => {
    expect(parseTrustProxy('true', 'PORTAL_TRUST_PROXY')).toMatch(/^PORTAL_TRUST_PROXY=true believes/);
  });
});
