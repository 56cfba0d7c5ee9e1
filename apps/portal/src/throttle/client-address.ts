import { createHash } from 'node:crypto';
import { addressBlock } from '@app/platform';
import type { Request } from 'express';

/** The block a request is counted under (behind nginx, the client's: PORTAL_TRUST_PROXY): IPv4 as is, IPv6 by /64. */
export function clientBlock(request: Request): string {
  return addressBlock(request.ip);
}

/** How the log and the throttle name an account (typed email, known or not): a hash, never the address itself. */
export function emailHash(email: string): string {
  return createHash('sha256').update(email).digest('hex').slice(0, 32);
}
