import { classifyAddress, isMetadataRefusal } from './address-policy';
import { OutboundAllowList } from './outbound-allow-list';
import type { OutboundFailure } from './outbound-result';
import { addressesOf, type Resolver } from './resolver';

export interface TargetPolicyOptions {
  /**
   * Plain `http:` is refused unless the allow-list names the target. True in production (NODE_ENV=production): the
   * composition root reads the environment, never this library.
   */
  requireHttps: boolean;
  /** The operator's allow-list: an OutboundAllowList, or its entries (OutboundAllowList.parse). Empty by default. */
  allowList?: OutboundAllowList | readonly string[] | string;
}

type Refusal = Omit<OutboundFailure, 'latencyMs'>;

/** A URL's host without IPv6 brackets, as it is connected to and as the allow-list names it. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Which outbound targets may be reached (docs/webhooks.md): the URL's form, the HTTPS rule, and every address its
 * host resolves to. Used when a URL is saved (OutboundClient.check) and again on every connection
 * (safe-dispatcher.ts), on the addresses resolved for that connection.
 */
export class TargetPolicy {
  readonly allowList: OutboundAllowList;
  readonly requireHttps: boolean;

  constructor(options: TargetPolicyOptions) {
    this.requireHttps = options.requireHttps;
    const list = options.allowList ?? OutboundAllowList.EMPTY;
    this.allowList = list instanceof OutboundAllowList ? list : OutboundAllowList.parse(list);
  }

  /** The URL, parsed, or why it cannot be a target before any address is known. */
  parse(raw: string): URL | Refusal {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return { kind: 'invalid_url', message: 'not an absolute URL' };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { kind: 'invalid_url', message: `${url.protocol} is not http: nor https:` };
    if (url.username !== '' || url.password !== '')
      return { kind: 'invalid_url', message: 'credentials in the URL are not sent anywhere: remove them' };
    if (hostOf(url) === '') return { kind: 'invalid_url', message: 'the URL has no host' };
    // Without address blocks in the allow-list, only the host's name could permit http: no need to resolve it.
    if (this.httpRefused(url) && !this.allowList.allowsHost(hostOf(url)) && !this.allowList.hasBlocks)
      return this.httpsRequired(url);
    return url;
  }

  /**
   * Whether the addresses the URL's host resolved to may be connected to: every one must be (a name that answers
   * one refused address among public ones is refused), each by its class or by the allow-list, and never a cloud
   * metadata address. Then the HTTPS rule: plain http: only for a host the allow-list names, or whose every address
   * lies in its blocks. Answers undefined when the target may be reached.
   */
  vet(url: URL, addresses: readonly string[]): Refusal | undefined {
    const host = hostOf(url);
    if (addresses.length === 0) return { kind: 'connect_error', message: `${host} resolved to no address` };
    const byName = this.allowList.allowsHost(host);
    for (const address of addresses) {
      const verdict = classifyAddress(address);
      if (verdict.allowed) continue;
      if (!isMetadataRefusal(verdict) && (byName || this.allowList.allowsAddress(address))) continue;
      const inner = verdict.embedded ? ` (carrying ${verdict.embedded.address})` : '';
      const named = address === host ? address : `${host} resolves to ${address}`;
      return {
        kind: 'refused_target',
        message: `${named}${inner}: ${verdict.reason.replace('_', ' ')} address, refused`,
        address,
        reason: verdict.reason,
      };
    }
    if (this.httpRefused(url) && !byName && !addresses.every((address) => this.allowList.allowsAddress(address)))
      return this.httpsRequired(url);
    return undefined;
  }

  /**
   * Resolves the URL's host once (a literal address is taken as it is) and vets the answer: the addresses, or why
   * the target may not be reached. Never rejects: a failed resolution is a `connect_error`.
   */
  async resolveAndVet(url: URL, resolver: Resolver): Promise<{ addresses: readonly string[] } | Refusal> {
    const host = hostOf(url);
    let addresses: readonly string[];
    try {
      addresses = await addressesOf(host, resolver);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException)?.code ?? String(error);
      return { kind: 'connect_error', message: `${host} did not resolve (${code})` };
    }
    return this.vet(url, addresses) ?? { addresses };
  }

  private httpRefused(url: URL): boolean {
    return this.requireHttps && url.protocol === 'http:';
  }

  private httpsRequired(url: URL): Refusal {
    return { kind: 'https_required', message: `${hostOf(url)}: plain http: is refused in production, use https:` };
  }
}
