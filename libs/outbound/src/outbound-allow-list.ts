import { isIP } from 'node:net';
import * as ipaddr from 'ipaddr.js';
import { parseAddress } from './address-policy';

/** A DNS label: letters, digits and inner hyphens (underscores too: some internal names have them), 1 to 63. */
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

function normalizedHost(host: string): string {
  const lower = host.trim().toLowerCase().replace(/\.$/, '');
  return lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
}

function isHostName(name: string): boolean {
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => LABEL.test(label));
}

/**
 * The operator's allow-list of outbound targets (docs/webhooks.md): what it names may be reached although its
 * address class is refused (a receiver on 127.0.0.1 in a test, one on a private network in an integration
 * environment), and over plain `http:` where HTTPS is otherwise required. Entries:
 * - an address block, `127.0.0.1/32`, `10.20.0.0/16`, `fd00::/8`, or one address (`127.0.0.1`, `::1`);
 * - a host name, `hooks.internal` (that name, whatever it resolves to), or `*.internal` (its subdomains).
 * Never the cloud metadata addresses, whatever an entry covers (address-policy.ts).
 */
export class OutboundAllowList {
  private constructor(
    private readonly blocks: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][],
    private readonly names: ReadonlySet<string>,
    private readonly suffixes: readonly string[],
  ) {}

  static readonly EMPTY = new OutboundAllowList([], new Set(), []);

  /**
   * Reads entries, as an array or one comma-separated string (an environment variable's value). Throws an Error
   * naming the first entry that is neither an address block, an address nor a host name.
   */
  static parse(entries: readonly string[] | string): OutboundAllowList {
    const list = typeof entries === 'string' ? entries.split(',') : entries;
    const blocks: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
    const names = new Set<string>();
    const suffixes: string[] = [];
    for (const raw of list) {
      const entry = normalizedHost(raw);
      if (entry === '') continue;
      const [address, bits, ...rest] = entry.split('/');
      if (isIP(address) !== 0 && rest.length === 0) {
        const cidr = bits === undefined ? `${address}/${isIP(address) === 4 ? 32 : 128}` : entry;
        if (!ipaddr.isValidCIDR(cidr) || !/^\d{1,3}$/.test(cidr.split('/')[1]))
          throw new Error(`outbound allow-list: "${raw.trim()}" is not an address block`);
        const base = parseAddress(address);
        if (base === undefined) throw new Error(`outbound allow-list: "${raw.trim()}" is not an address block`);
        blocks.push([base, Number(cidr.split('/')[1])]);
      } else if (entry.startsWith('*.') && isHostName(entry.slice(2))) {
        suffixes.push(entry.slice(1));
      } else if (isHostName(entry)) {
        names.add(entry);
      } else {
        throw new Error(
          `outbound allow-list: "${raw.trim()}" is neither an address block (127.0.0.1/32), an address nor a host name (hooks.internal, *.internal)`,
        );
      }
    }
    return new OutboundAllowList(blocks, names, suffixes);
  }

  get isEmpty(): boolean {
    return this.blocks.length === 0 && this.names.size === 0 && this.suffixes.length === 0;
  }

  /** Whether an entry is an address block (then an http: URL's host must be resolved before it is refused). */
  get hasBlocks(): boolean {
    return this.blocks.length > 0;
  }

  /** Whether a URL's host name is named by an entry (an IP literal is never a name: allowsAddress decides it). */
  allowsHost(host: string): boolean {
    const name = normalizedHost(host);
    if (isIP(name) !== 0) return false;
    return this.names.has(name) || this.suffixes.some((suffix) => name.endsWith(suffix));
  }

  /** Whether an address lies in an entry's block (an IPv4-mapped IPv6 address as the IPv4 address it is). */
  allowsAddress(raw: string): boolean {
    const parsed = parseAddress(raw);
    if (parsed === undefined) return false;
    const address = parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed;
    return this.blocks.some(([block, bits]) => block.kind() === address.kind() && address.match(block, bits));
  }
}
