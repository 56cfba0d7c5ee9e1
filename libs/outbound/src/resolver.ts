import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * Answers every address a host name resolves to, in the order a connection would try them. Injected
 * (OutboundClientOptions.resolver) so that a test can answer differently from one call to the next, as a DNS
 * rebinding attacker's name server does.
 */
export type Resolver = (hostname: string) => Promise<readonly string[]>;

/** The system's resolver (getaddrinfo, /etc/hosts included), every address, in its own order. */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, order: 'verbatim' });
  return answers.map((answer) => answer.address);
};

/** The addresses to vet for a URL's host (without brackets): a literal address as it is, a name through the resolver. */
export async function addressesOf(host: string, resolver: Resolver): Promise<readonly string[]> {
  return isIP(host) !== 0 ? [host] : resolver(host);
}
