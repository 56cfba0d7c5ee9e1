import { createHash } from 'node:crypto';

/**
 * What names a binding on the change channel and in the data plane's cache: SHA-256 of issuer and client id. It
 * travels among the key hashes of a change (a cache forgets it, the key filter holds one extra hash), so that a
 * new binding replaces an "unknown client" answer every instance may have cached, as a new key does.
 */
export function clientBindingHash(issuer: string, clientId: string): string {
  return createHash('sha256').update(issuer).update('\n').update(clientId).digest('hex');
}
