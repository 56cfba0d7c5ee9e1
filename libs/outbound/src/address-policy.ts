import { isIP } from 'node:net';
import * as ipaddr from 'ipaddr.js';

/**
 * Why an address is refused as the target of an outbound request (docs/webhooks.md):
 * - `loopback`: 127.0.0.0/8, ::1; `private`: 10/8, 172.16/12, 192.168/16, fc00::/7 (and the old site-local fec0::/10);
 * - `link_local`: 169.254/16, fe80::/10; `metadata`: a cloud's instance metadata service (169.254.169.254 and kin);
 * - `cgnat`: 100.64/10; `unspecified`: 0.0.0.0/8, ::; `multicast`: 224/4, ff00::/8; `broadcast`: 255.255.255.255;
 * - `reserved`: documentation, benchmarking, IETF protocol and future-use ranges, and every IPv6 address outside
 *   the global unicast space 2000::/3 that no other reason names;
 * - `embedded_ipv4`: an IPv6 transition form (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo) that carries an
 *   IPv4 address which is itself refused;
 * - `transition`: 6to4, Teredo, IPv4-compatible, IPv4-translated and local-use NAT64 addresses, refused outright
 *   whatever IPv4 they carry: where they lead is decided by a relay or translator nobody here vouches for;
 * - `not_an_address`: not an IP address as Node's own parser reads one.
 */
export const REFUSAL_REASONS = [
  'loopback',
  'private',
  'link_local',
  'metadata',
  'cgnat',
  'unspecified',
  'multicast',
  'broadcast',
  'reserved',
  'embedded_ipv4',
  'transition',
  'not_an_address',
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

export type AddressVerdict =
  | { allowed: true; address: string }
  | {
      allowed: false;
      address: string;
      reason: RefusalReason;
      /** For `embedded_ipv4` (and `transition` where one is carried): the IPv4 address inside, and its verdict. */
      embedded?: { address: string; reason?: RefusalReason };
    };

/**
 * Cloud instance metadata endpoints: AWS/GCP/Azure/OpenStack 169.254.169.254, AWS ECS task metadata 169.254.170.2,
 * Alibaba 100.100.100.200, AWS's IPv6 fd00:ec2::254. They answer credentials to whoever asks from the machine, so no
 * allow-list entry lets a request reach them (OutboundAllowList).
 */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254']);

/** ipaddr.js's range names and our reasons; any other name but `unicast` is `reserved` (deny by default). */
const IPV4_REASONS: Record<string, RefusalReason> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link_local',
  loopback: 'loopback',
  carrierGradeNat: 'cgnat',
  private: 'private',
};

const IPV6_REASONS: Record<string, RefusalReason> = {
  unspecified: 'unspecified',
  linkLocal: 'link_local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'private',
  deprecatedSiteLocal: 'private',
};

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const NAT64_LOCAL_USE = ipaddr.IPv6.parseCIDR('64:ff9b:1::/48');
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16');
const TEREDO = ipaddr.IPv6.parseCIDR('2001::/32');
const IPV4_MAPPED = ipaddr.IPv6.parseCIDR('::ffff:0:0/96');
const IPV4_TRANSLATED = ipaddr.IPv6.parseCIDR('::ffff:0:0:0/96');
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

function ipv4From(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function classifyIpv4(address: ipaddr.IPv4): AddressVerdict {
  const text = address.toString();
  if (METADATA_ADDRESSES.has(text)) return { allowed: false, address: text, reason: 'metadata' };
  const range = address.range();
  if (range === 'unicast') return { allowed: true, address: text };
  return { allowed: false, address: text, reason: IPV4_REASONS[range] ?? 'reserved' };
}

/**
 * An IPv6 transition form and the IPv4 address it carries, or undefined for any other IPv6 address. `outright`: the
 * form is refused even when the IPv4 inside is public (only IPv4-mapped and well-known NAT64 addresses reach
 * exactly that IPv4 address, through this machine's own stack or a NAT64 gateway of its network).
 */
function transitionForm(address: ipaddr.IPv6): { ipv4: ipaddr.IPv4[]; outright: boolean } | undefined {
  const p = address.parts;
  const last32 = ipv4From(p[6], p[7]);
  if (address.match(IPV4_MAPPED)) return { ipv4: [last32], outright: false };
  if (address.match(NAT64_WELL_KNOWN)) return { ipv4: [last32], outright: false };
  // Local-use NAT64 may put the IPv4 address at any of RFC 6052's offsets: the /96 one is checked, and the form refused.
  if (address.match(NAT64_LOCAL_USE)) return { ipv4: [last32], outright: true };
  if (address.match(SIX_TO_FOUR)) return { ipv4: [ipv4From(p[1], p[2])], outright: true };
  // Teredo: the server's address in clear, the client's with every bit flipped (RFC 4380).
  if (address.match(TEREDO))
    return { ipv4: [ipv4From(p[6] ^ 0xffff, p[7] ^ 0xffff), ipv4From(p[2], p[3])], outright: true };
  if (address.match(IPV4_TRANSLATED)) return { ipv4: [last32], outright: true };
  // IPv4-compatible (::a.b.c.d, deprecated by RFC 4291); :: and ::1 are classified as themselves.
  if (address.match(IPV4_COMPATIBLE) && (p[6] !== 0 || p[7] > 1)) return { ipv4: [last32], outright: true };
  return undefined;
}

function classifyIpv6(address: ipaddr.IPv6): AddressVerdict {
  const text = address.toString();
  if (METADATA_ADDRESSES.has(text)) return { allowed: false, address: text, reason: 'metadata' };
  const form = transitionForm(address);
  if (form) {
    for (const ipv4 of form.ipv4) {
      const inner = classifyIpv4(ipv4);
      if (!inner.allowed)
        return {
          allowed: false,
          address: text,
          reason: 'embedded_ipv4',
          embedded: { address: inner.address, reason: inner.reason },
        };
    }
    if (form.outright)
      return { allowed: false, address: text, reason: 'transition', embedded: { address: form.ipv4[0].toString() } };
    return { allowed: true, address: text };
  }
  const range = address.range();
  const named = IPV6_REASONS[range];
  if (named) return { allowed: false, address: text, reason: named };
  if (range !== 'unicast' || !address.match(GLOBAL_UNICAST))
    return { allowed: false, address: text, reason: 'reserved' };
  return { allowed: true, address: text };
}

/**
 * An address as Node reads it (`net.isIP`), or undefined. An IPv6 address goes through the WHATWG URL parser's
 * hexadecimal form first (zone id aside): ipaddr.js 2.5 reads every `::a.b.c.d` as IPv4-mapped `::ffff:a.b.c.d`,
 * where a connection goes to the IPv4-compatible `::a.b.c.d`.
 */
export function parseAddress(raw: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const family = isIP(raw);
  if (family === 4) return ipaddr.IPv4.parse(raw);
  if (family !== 6) return undefined;
  const bare = raw.split('%')[0];
  return ipaddr.IPv6.parse(new URL(`http://[${bare}]/`).hostname.slice(1, -1));
}

/**
 * Whether an outbound request may go to this IP address, by its class alone (the operator's allow-list is
 * OutboundAllowList's business). Only what Node's own parser takes for an address is one (`net.isIP`): the forms a
 * connect would read differently (`0x7f.1`, `127.1`, octal) are `not_an_address`; a URL's host name reaches here in
 * the WHATWG URL parser's normal form, which writes those as dotted decimal.
 */
export function classifyAddress(raw: string): AddressVerdict {
  const address = parseAddress(raw);
  if (address === undefined) return { allowed: false, address: raw, reason: 'not_an_address' };
  return address.kind() === 'ipv4' ? classifyIpv4(address as ipaddr.IPv4) : classifyIpv6(address as ipaddr.IPv6);
}

/** Whether a refusal is a cloud metadata endpoint, plain or carried in an IPv6 form (no allow-list lets it through). */
export function isMetadataRefusal(verdict: AddressVerdict): boolean {
  return !verdict.allowed && (verdict.reason === 'metadata' || verdict.embedded?.reason === 'metadata');
}
