import { createHash, randomBytes } from 'node:crypto';

/** Recognisable prefix, so that a leaked key is easy to spot (and to scan for) in code and logs. */
export const API_KEY_PREFIX = 'petk_';
const API_KEY_PATTERN = /^petk_[A-Za-z0-9_-]{43}$/;

/** 256 random bits, base64url: `petk_` + 43 characters. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

/**
 * Keys are high-entropy random secrets, so a fast SHA-256 is enough (a slow password hash would only cost
 * latency): only the hash is stored, and lookups go by hash, so their timing says nothing about the key.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** What `keys list` shows of a key: its prefix and first characters, never enough to use it. */
export function keyHint(key: string): string {
  return `${key.slice(0, API_KEY_PREFIX.length + 4)}…`;
}
