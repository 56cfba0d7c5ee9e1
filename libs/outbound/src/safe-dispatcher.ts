import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { OutboundRefusal } from './outbound-result';
import type { Resolver } from './resolver';
import { TargetPolicy } from './target-policy';

export interface SafeDispatcherOptions {
  policy: TargetPolicy;
  resolver: Resolver;
  /** TCP (and TLS) connection's own limit; the attempt's timeout (send's timeoutMs) usually ends it first. */
  connectTimeoutMs: number;
  /** Certificate authorities to trust instead of Node's bundle (an integration environment's private CA, a test's). */
  ca?: string | Buffer | (string | Buffer)[];
}

/**
 * The undici dispatcher every outbound request goes through. The target is checked when each connection is made,
 * not only when a URL was saved: its host name is resolved once (a literal address is taken as it is), every
 * address is vetted by the policy, and the socket is opened to the first of those vetted addresses, never through
 * a second lookup. A name re-pointed at 127.0.0.1 after it was saved (DNS rebinding) is refused here, and one whose
 * answer changes between the check and the connection cannot send the connection elsewhere: there is no second
 * answer. The Host header and TLS (SNI, the certificate's name) keep the URL's host name. A refusal fails the
 * request with an OutboundRefusal; redirects are never followed (no redirect interceptor), cookies never kept
 * (undici has no jar), no proxy is read from the environment.
 */
export function createSafeDispatcher(options: SafeDispatcherOptions): Agent {
  const base = buildConnector({ timeout: options.connectTimeoutMs, ...(options.ca ? { ca: options.ca } : {}) });
  const connect: buildConnector.connector = (params, callback) => {
    const host = params.hostname;
    const url = new URL(`${params.protocol}//${isIP(host) === 6 ? `[${host}]` : host}`);
    void options.policy.resolveAndVet(url, options.resolver).then((admitted) => {
      if (!('addresses' in admitted)) return callback(new OutboundRefusal(admitted), null);
      try {
        base({ ...params, hostname: admitted.addresses[0], servername: isIP(host) !== 0 ? undefined : host }, callback);
      } catch (error) {
        callback(error as Error, null);
      }
    });
  };
  return new Agent({ connect });
}
