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

  /** The tracker the anonymous window counts the request under (an IPv6 client by its /64). */
  resolve(request: Pick<IncomingMessage, 'headers' | 'socket'>): string {
    return addressTracker(this.address(request)) ?? 'unknown';
  }

  /**
   * The client's own address by the same rule, whole (an IPv6 one too, not its /64): what a consumer's allowed
   * addresses are judged on. The socket's address when no trusted hop says otherwise; undefined without one.
   */
  address(request: Pick<IncomingMessage, 'headers' | 'socket'>): string | undefined {
    const socket = request.socket.remoteAddress;
    if (this.trusted.kind === 'none') return socket;
    const header = request.headers['x-forwarded-for'];
    const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    if (forwarded.length === 0) return socket;

    if (this.trusted.kind === 'hops') {
      const entry = forwarded[Math.max(0, forwarded.length - this.trusted.hops)];
      return isIP(entry.split('%')[0]) === 0 ? socket : entry;
    }
    const list = this.trusted.list;
    let hop = (socket ?? '').split('%')[0];
    if (isIP(hop) === 0 || !list.check(hop, familyOf(hop))) return socket;
    for (let i = forwarded.length - 1; i >= 0; i -= 1) {
      hop = forwarded[i].split('%')[0];
      if (isIP(hop) === 0) return socket;
      if (!list.check(hop, familyOf(hop))) return hop;
    }
    // Every hop is a trusted proxy: the furthest one is the best we know.
    return hop;
  }
}
