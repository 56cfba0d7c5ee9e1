import type { ZxcvbnFactory } from '@zxcvbn-ts/core';

/** The least a production secret must carry (a random 128-bit value; `openssl rand -hex 32` gives about 210 here). */
export const MIN_SECRET_BITS = 128;

/**
 * An upper estimate of a secret's entropy in bits: its length times the Shannon entropy of its own characters.
 * A random token scores near its true strength (64 hex characters about 250, 43 base64url about 230); a
 * repeated or near-constant string scores near 0 (32 × "a": 0), a short word list little. It cannot tell a
 * random string from a memorable one of the same characters: one of the estimates secretStrength takes the least of.
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

/** Epoch seconds from 2000-01-01 to 2100-01-01: what a 10-digit timestamp of a secret's making reads as. */
const EPOCH_SECONDS = { min: 946_684_800, max: 4_102_444_800 };
/** Sub-second parts a timestamp may carry: none, ms, µs, ns. */
const SUB_SECOND_DIGITS = [0, 3, 6, 9];

const isEpochSeconds = (digits: string): boolean => {
  if (digits.length !== 10) return false;
  const seconds = Number(digits);
  return seconds >= EPOCH_SECONDS.min && seconds < EPOCH_SECONDS.max;
};

/**
 * What a run of digits is worth when it reads, from its start to its end, as timestamps one right after the other
 * (each a 10-digit epoch second of 2000–2100 with an optional ms/µs/ns part), to a guesser who knows roughly when
 * the secret was made: the first second 32 bits (any second of a century, unless `first` is known from an earlier
 * run), each later one the bits of its distance from the first plus 2 (made within moments of each other), every 3
 * sub-second digits 10 bits. The cheapest reading (a ms part may itself read as the start of a second), found by
 * dynamic programming over the run's positions; undefined when the run is not all timestamps.
 */
function timestampRunBits(run: string, first: number | undefined): number | undefined {
  if (!isEpochSeconds(run.slice(0, 10))) return undefined;
  const anchor = first ?? Number(run.slice(0, 10));
  const cheapest = new Array<number>(run.length + 1).fill(Infinity);
  cheapest[run.length] = 0;
  for (let at = run.length - 10; at >= 0; at -= 1) {
    const digits = run.slice(at, at + 10);
    if (!isEpochSeconds(digits)) continue;
    const seconds = Number(digits);
    const secondBits = at === 0 && first === undefined ? 32 : Math.log2(Math.abs(seconds - anchor) + 1) + 2;
    for (const extra of SUB_SECOND_DIGITS) {
      const end = at + 10 + extra;
      if (end <= run.length) cheapest[at] = Math.min(cheapest[at], secondBits + (extra / 3) * 10 + cheapest[end]);
    }
  }
  return Number.isFinite(cheapest[0]) ? cheapest[0] : undefined;
}

/** The secret without its timestamp-like digit runs, and what those runs are worth (timestampRunBits). */
function withoutTimestamps(secret: string): { rest: string; bits: number } {
  let bits = 0;
  let first: number | undefined;
  const rest = secret.replace(/\d{10,}/g, (run) => {
    const worth = timestampRunBits(run, first);
    if (worth === undefined) return run;
    bits += worth;
    first ??= Number(run.slice(0, 10));
    return ' ';
  });
  return { rest, bits: Math.round(bits) };
}

let estimator: ZxcvbnFactory | undefined;
/**
 * zxcvbn-ts with its common language package (the 49,233 most common passwords, diceware words, keyboard graphs):
 * it finds repetition (48 random bits four times: ~42 bits), sequences (`0123…xyzABCDEF`: ~27 bits), dates, words
 * and keyboard walks. Loaded on first use only (~0.3 s, ~6 MB): a gateway outside production never pays for it.
 */
function zxcvbn(): ZxcvbnFactory {
  if (!estimator) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded lazily, see above
    const core = require('@zxcvbn-ts/core') as typeof import('@zxcvbn-ts/core');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded lazily, see above
    const common = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
    estimator = new core.ZxcvbnFactory({
      dictionary: { ...common.dictionary },
      graphs: common.adjacencyGraphs,
      maxLength: 256,
    });
  }
  return estimator;
}

/** zxcvbn's guesses for `text`, in bits (its brute force counts 10 guesses a character: a low estimate for random text). */
function zxcvbnBits(text: string, userInputs: string[]): number {
  if (text.trim() === '') return 0;
  return Math.round(zxcvbn().check(text, userInputs).guessesLog10 * Math.log2(10));
}

export interface SecretStrength {
  /** The least of the estimates, in bits. */
  bits: number;
  /** What made it weak, when bits < MIN_SECRET_BITS: for the start-up error. */
  weakness?: string;
}

/**
 * How strong a secret is: the least of three estimates, each a different way a guesser saves work.
 * - the Shannon estimate of its characters (estimatedEntropyBits): `a` × 32, a short alphabet;
 * - zxcvbn-ts's guesses: repetition, sequences, dates, common passwords and words, keyboard walks, `userInputs`
 *   (names of the product that a person would put in);
 * - timestamp-like digit runs (epoch seconds of 2000–2100, optionally with ms/µs/ns) counted at what they are worth to
 *   someone who knows about when the secret was made, plus zxcvbn's guesses for the rest.
 * `openssl rand -hex 32` scores about 210, 32 random bytes in base64url about 140 (zxcvbn's brute force counts
 * only 10 guesses a character); 48 random bits repeated four times about 42, `0123…xyzABCDEF` about 27, three
 * concatenated millisecond timestamps under 80.
 */
export function secretStrength(secret: string, userInputs: string[] = []): SecretStrength {
  const shannon = estimatedEntropyBits(secret);
  const guessed = zxcvbnBits(secret, userInputs);
  const stamps = withoutTimestamps(secret);
  const timed = stamps.bits === 0 ? Infinity : stamps.bits + zxcvbnBits(stamps.rest, userInputs);
  const bits = Math.min(shannon, guessed, timed);
  if (bits >= MIN_SECRET_BITS) return { bits };
  const weakness =
    bits === timed
      ? 'it is made of timestamps'
      : bits === shannon
        ? 'it repeats too few distinct characters'
        : describeGuessable(secret, userInputs);
  return { bits, weakness };
}

const PATTERN_WORDS: Record<string, string> = {
  repeat: 'it repeats itself',
  sequence: 'it is a sequence (such as 0123… or abcd…)',
  dictionary: 'it is made of common words or passwords',
  spatial: 'it is a keyboard walk',
  date: 'it is made of dates',
  regex: 'it follows a pattern',
};

function describeGuessable(secret: string, userInputs: string[]): string {
  const patterns = [
    ...new Set(
      zxcvbn()
        .check(secret, userInputs)
        .sequence.map((match) => match.pattern),
    ),
  ].filter((pattern) => pattern !== 'bruteforce');
  return patterns.map((pattern) => PATTERN_WORDS[pattern] ?? `it has a ${pattern} pattern`).join(', ') || 'guessable';
}
