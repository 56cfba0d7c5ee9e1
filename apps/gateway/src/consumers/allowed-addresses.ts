import { isIP } from 'node:net';
import * as ipaddr from 'ipaddr.js';

/** Most ranges one consumer, key or client binding may list: a restriction, not a firewall. */
export const MAX_ALLOWED_ADDRESSES = 100;

/** The one rule of an allowedAddresses field, as the admin API says it. */
export const ALLOWED_ADDRESSES_RULE = `allowedAddresses must be null or a list of 1 to ${MAX_ALLOWED_ADDRESSES} IPv4 or IPv6 addresses or CIDR ranges (such as 10.1.0.0/16 or 2001:db8::/32)`;

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Where IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`, RFC 4291 2.5.5.2) begin: their last 32 bits are the IPv4 one. */
const IPV4_MAPPED_PREFIX = 96;

/**
 * One entry as stored: a CIDR range on its network address (`10.1.2.3/16` is `10.1.0.0/16`, a lone address its /32
 * or /128), IPv6 in its short form; undefined when it is neither an address nor a range. The address part must be
 * one Node calls an IP (no `10.1` or `0x0a.1`, which ipaddr.js would read as IPv4). A range inside the IPv4-mapped
 * block (`::ffff:10.1.0.0/112`) is stored as the IPv4 range it means (`10.1.0.0/16`): clients on such addresses are
 * judged as IPv4, so the IPv6 form would never match.
 */
export function normalizedRange(entry: unknown): string | undefined {
  if (typeof entry !== 'string') return undefined;
  const [address, bits, ...rest] = entry.trim().split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits))) return undefined;
  const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
  if (prefix > (family === 4 ? 32 : 128)) return undefined;
  if (family === 4) return `${ipaddr.IPv4.networkAddressFromCIDR(`${address}/${prefix}`).toString()}/${prefix}`;
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${address}/${prefix}`);
  if (prefix >= IPV4_MAPPED_PREFIX && network.isIPv4MappedAddress())
    return `${network.toIPv4Address().toString()}/${prefix - IPV4_MAPPED_PREFIX}`;
  return `${network.toString()}/${prefix}`;
}

/**
 * An allowedAddresses value as stored: null (anywhere), or its ranges normalized, each once, in the order given;
 * undefined when the value breaks ALLOWED_ADDRESSES_RULE (an empty list too: it would refuse every request, which
 * disabling says better).
 */
export function normalizedAddressList(value: unknown): string[] | null | undefined {
  if (value === null) return null;
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_ALLOWED_ADDRESSES) return undefined;
  const ranges: string[] = [];
  for (const entry of value) {
    const range = normalizedRange(entry);
    if (range === undefined) return undefined;
    if (!ranges.includes(range)) ranges.push(range);
  }
  return ranges;
}

/** Stored ranges parsed once (when a record is loaded), matched without parsing them again. */
class ParsedRanges {
  private constructor(private readonly ranges: ReadonlyArray<[Address, number]>) {}

  static of(stored: readonly string[]): ParsedRanges {
    return new ParsedRanges(stored.map((range) => ipaddr.parseCIDR(range)));
  }

  includes(address: Address): boolean {
    for (const [network, bits] of this.ranges)
      if (network.kind() === address.kind() && address.match(network, bits)) return true;
    return false;
  }
}

/**
 * Where a credential may be used from (issue #50, point 5): its consumer's ranges and its own (a key's or a client
 * binding's), each absent or a list; a request must come from inside both. Built when the credential's record is
 * loaded, so a request pays one address parse and a few comparisons, and only when a restriction exists.
 */
export class AddressRestriction {
  private constructor(
    private readonly consumer: ParsedRanges | undefined,
    private readonly credential: ParsedRanges | undefined,
  ) {}

  /** The restriction of these stored lists, or undefined when neither restricts anything (the common case). */
  static of(consumer: readonly string[] | null, credential: readonly string[] | null): AddressRestriction | undefined {
    if (!consumer && !credential) return undefined;
    return new AddressRestriction(
      consumer ? ParsedRanges.of(consumer) : undefined,
      credential ? ParsedRanges.of(credential) : undefined,
    );
  }

  /** Whether the client address (as the trusted-proxy rule found it) may use the credential; no address: no. */
  allows(raw: string | undefined): boolean {
    const text = raw?.split('%')[0];
    if (!text || isIP(text) === 0) return false;
    const parsed = ipaddr.parse(text);
    // An IPv4 client reached over an IPv6 socket (::ffff:10.1.2.3) is the IPv4 address it is.
    const address = parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed;
    return (
      (!this.consumer || this.consumer.includes(address)) && (!this.credential || this.credential.includes(address))
    );
  }
}
