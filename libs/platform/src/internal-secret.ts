import { timingSafeEqual, createHash } from 'node:crypto';

/** Header that carries the shared secret from the gateway to internal services. */
export const INTERNAL_SECRET_HEADER = 'x-internal-secret';

/** Constant-time comparison (of digests, so that lengths leak nothing either). */
export function matchesInternalSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
