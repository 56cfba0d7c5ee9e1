/** The least a production secret must carry (a random 128-bit value; `openssl rand -hex 32` gives about 250). */
export const MIN_SECRET_BITS = 128;

/**
 * An upper estimate of a secret's entropy in bits: its length times the Shannon entropy of its own characters.
 * A random token scores near its true strength (64 hex characters about 250, 43 base64url about 230); a
 * repeated or near-constant string scores near 0 (32 × "a": 0), a short word list little. It cannot tell a
 * random string from a memorable one of the same characters: it refuses the obviously weak, nothing more.
 */
export function estimatedEntropyBits(secret: string): number {
  const counts = new Map<string, number>();
  for (const character of secret) counts.set(character, (counts.get(character) ?? 0) + 1);
  const length = [...secret].length;
  let perCharacter = 0;
  for (const count of counts.values()) {
    const p = count / length;
    perCharacter -= p * Math.log2(p);
  }
  return Math.round(perCharacter * length);
}
