import { hash, verify } from '@node-rs/argon2';

/** OWASP's argon2id settings (19 MiB, 2 passes, 1 lane). */
const OPTIONS = {
  algorithm: 2 /* Algorithm.Argon2id (a const enum: not importable under isolatedModules) */,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
};

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 128;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/** A hash of nothing anyone knows: verified against when an email is unknown, so both cases take one argon2 time. */
let dummy: Promise<string> | undefined;

/** `stored` absent (no account) or null (an account without a password: docs/sso.md): false, in one argon2 time. */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (stored === undefined || stored === null) {
    dummy ??= hashPassword(`no account ${Math.random()}`);
    await verify(await dummy, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
