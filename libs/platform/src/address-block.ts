import { isIP } from 'node:net';

function expandIpv6(address: string): number[] {
  let text = address.toLowerCase();
  const embedded = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (embedded) {
    const [a, b, c, d] = embedded.slice(1).map(Number);
    text = `${text.slice(0, embedded.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * The block a client address is counted under by the web apps' throttles: an IPv4 address as it is (IPv4-mapped
 * IPv6 included), an IPv6 address by its /64 (one host usually holds a whole /64 and could otherwise rotate through
 * 2^64 addresses). Anything that is not an address is `unknown` (one shared block: never a way around a limit).
 */
export function addressBlock(raw: string | undefined): string {
  const address = (raw ?? '').trim().split('%')[0];
  const family = isIP(address);
  if (family === 4) return address;
  if (family !== 6) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  return `${expandIpv6(address)
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}
