import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { addressBlock, parseTrustProxy, TrustedProxies } from '@app/platform';

/**
 * The key an address is counted under: an IPv4 address as it is (IPv4-mapped IPv6 included), an IPv6
 * address by its /64, since one host usually holds a whole /64 and could otherwise rotate through 2^64
 * trackers. Either way a short, bounded string. Returns undefined for anything that is not an address.
 */
export function addressTracker(raw: string | undefined): string | undefined {
  const block = addressBlock(raw);
  return block === 'unknown' ? undefined : block;
}

function familyOf(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

/**
 * The client address of a request, for the anonymous limit. Only what a trusted proxy appended to
 * X-Forwarded-For counts: with a hop count N, the N-th entry from the right; with addresses, the first entry
 * from the right that is not a trusted proxy, walking only while each hop is trusted. Anything on that path
 * that is not an IP address makes the socket's own address count: a client cannot choose its tracker.
 */
export class ClientAddressResolver {
  constructor(private readonly trusted: TrustedProxies) {}

  /** From the validated configuration (its `trustProxy`, Express's form of TRUST_PROXY). */
  static fromSetting(trustProxy: false | number | string): ClientAddressResolver {
    const parsed = parseTrustProxy(String(trustProxy));
    if (typeof parsed === 'string') throw new Error(parsed);
    return new ClientAddressResolver(parsed);
  }

  resolve(request: Pick<IncomingMessage, 'headers' | 'socket'>): string {
    const socket = request.socket.remoteAddress ?? '';
    const socketTracker = addressTracker(socket) ?? 'unknown';
    if (this.trusted.kind === 'none') return socketTracker;
    const header = request.headers['x-forwarded-for'];
    const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    if (forwarded.length === 0) return socketTracker;

    if (this.trusted.kind === 'hops') {
      const entry = forwarded[Math.max(0, forwarded.length - this.trusted.hops)];
      return addressTracker(entry) ?? socketTracker;
    }
    const list = this.trusted.list;
    let hop = socket.split('%')[0];
    if (isIP(hop) === 0 || !list.check(hop, familyOf(hop))) return socketTracker;
    for (let i = forwarded.length - 1; i >= 0; i -= 1) {
      hop = forwarded[i].split('%')[0];
      if (isIP(hop) === 0) return socketTracker;
      if (!list.check(hop, familyOf(hop))) return addressTracker(hop)!;
    }
    // Every hop is a trusted proxy: the furthest one is the best we know.
    return addressTracker(hop)!;
  }
}
