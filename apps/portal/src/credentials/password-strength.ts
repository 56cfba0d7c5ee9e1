import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { adjacencyGraphs, dictionary } from '@zxcvbn-ts/language-common';

/** The lowest zxcvbn score (0–4) a new password needs: 3 is "safely unguessable: moderate protection offline". */
export const PASSWORD_MIN_SCORE = 3;

/**
 * Only the first 64 characters are analysed: zxcvbn's matching grows fast with length (a 128-character password
 * took ~240 ms of event loop at its default of 256, ~70 ms at 64); past 64 characters the rest only adds strength.
 */
const ANALYSED_LENGTH = 64;

/**
 * zxcvbn-ts with the common language package: its 49,233 most common passwords (from breach corpora) and the 7,776
 * diceware words, and the keyboard adjacency graphs. Built once when this module loads (at start-up, not per
 * request): ~0.3 s and ~6 MB of heap.
 */
const zxcvbn = new ZxcvbnFactory({
  dictionary: { ...dictionary },
  graphs: adjacencyGraphs,
  maxLength: ANALYSED_LENGTH,
});
const COMMON_PASSWORDS = new Set<string>(dictionary['passwords-common'] as string[]);

export type WeakPasswordReason = 'BLANK' | 'COMMON' | 'GUESSABLE';

/**
 * Why a new password is too weak, or undefined: all whitespace, one of the common (breached) passwords as a whole,
 * or a zxcvbn score below PASSWORD_MIN_SCORE (the email and the site's name count as known words).
 */
export function weakPasswordReason(password: string, userInputs: string[] = []): WeakPasswordReason | undefined {
  if (password.trim() === '') return 'BLANK';
  if (COMMON_PASSWORDS.has(password.toLowerCase())) return 'COMMON';
  if (zxcvbn.check(password, [...userInputs, 'petstore', 'pet store', 'portal']).score < PASSWORD_MIN_SCORE)
    return 'GUESSABLE';
  return undefined;
}
