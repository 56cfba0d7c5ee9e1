import { Inject, Injectable, Logger } from '@nestjs/common';
import { SignInAudit } from '@app/web';
import type { Pool } from 'pg';
import { PORTAL_CONFIG, PortalConfig } from '../config/portal.config';
import { emailHash } from './client-address';

/** The portal's pg pool (the throttle table's), as a provider. */
export const PORTAL_POOL = Symbol('PORTAL_POOL');

/** How long an (account, address block) pair that signed in is remembered as the owner's. */
const KNOWN_PAIR_MS = 30 * 24 * 60 * 60 * 1000;

export type SignInVerdict =
  | { allowed: true }
  /** PAIR_LIMIT: this address block failed too often on this account; ACCOUNT_DELAY: the account's next slot is later. */
  | { allowed: false; code: 'PAIR_LIMIT' | 'ACCOUNT_DELAY'; retryAfterSeconds: number };

/** The bound of the audit's subject (printable ASCII, like X-On-Behalf-Of). */
const SUBJECT_MAX = 320;

/**
 * Who an audit event names: `account:<email as typed>` (percent-encoded past printable ASCII, left out past the
 * bound) and the address block (`unknown` left out).
 */
export function auditedPerson(email: string, block: string): { subject?: string; address?: string } {
  const subject = `account:${email}`.replace(/[^\x20-\x7e]/gu, (character) => encodeURIComponent(character));
  return {
    ...(email !== '' && subject.length <= SUBJECT_MAX ? { subject } : {}),
    ...(block !== 'unknown' ? { address: block } : {}),
  };
}

/**
 * Failed sign-ins slow the attacker, not the owner (OWASP ASVS 2.2.1, NIST SP 800-63B 5.2.2), counted in the
 * portal's `throttle` table (every instance sees one count):
 * - per (account, address block) pair: after `pairLimit` failures in the window, that pair is refused until the
 *   window ends. Another address (the owner's) is not.
 * - per account, from any address: after `delayAfter` failures in the window, one attempt per delay is admitted,
 *   the delay doubling from 1 s up to `maxDelayMs`. An address block that signed in to the account before (within
 *   30 days) is not delayed: an attacker spreading guesses over many addresses cannot keep the owner out.
 * - a successful password reset lifts both; a successful sign-in forgets its pair's failures.
 * The account is its typed email's hash: known and unknown emails are counted alike (nothing tells them apart).
 * Each sign-in, failure and refusal (a lockout) is also reported to the admin audit after the answer (SignInAudit),
 * naming the email as typed and the address block: the log has the hash only, the audit (operators) the email.
 */
@Injectable()
export class SignInAttempts {
  private readonly logger = new Logger('SignIn');
  private readonly table: string;

  constructor(
    @Inject(PORTAL_POOL) private readonly pool: Pool,
    @Inject(PORTAL_CONFIG) private readonly config: PortalConfig,
    private readonly audit: SignInAudit,
  ) {
    this.table = `"${config.schema}"."throttle"`;
  }

  private keys(email: string, block: string) {
    const account = emailHash(email);
    return {
      account,
      accountKey: `sign-in-account:${account}`,
      pairKey: `sign-in-pair:${account}:${block}`,
      knownKey: `sign-in-known:${account}:${block}`,
    };
  }

  /** Whether an attempt on `email` from `block` may check a password now; when it may not, why and for how long. */
  async admit(email: string, block: string): Promise<SignInVerdict> {
    const { accountKey, pairKey, knownKey } = this.keys(email, block);
    const { pairLimit, delayAfter, maxDelayMs } = this.config.throttle.signIn;
    const { rows } = await this.pool.query<{ key: string; hits: number; expires_in: number; blocked_in: number }>(
      `SELECT "key", "hits",
         GREATEST(1, CEIL(EXTRACT(EPOCH FROM ("expires_at" - now()))))::int AS expires_in,
         GREATEST(1, CEIL(EXTRACT(EPOCH FROM (COALESCE("blocked_until", now()) - now()))))::int AS blocked_in
       FROM ${this.table} WHERE "key" = ANY($1) AND "expires_at" > now()`,
      [[accountKey, pairKey, knownKey]],
    );
    const row = (key: string) => rows.find((r) => r.key === key);
    const pair = row(pairKey);
    if (pair && pair.hits >= pairLimit) return this.refuse('PAIR_LIMIT', pair.expires_in, email, block);
    const counted = row(accountKey);
    if (row(knownKey) || !counted || counted.hits < delayAfter) return { allowed: true };
    // Claim the account's next slot: one UPDATE, so attempts racing for one slot get one admission.
    const delayMs = Math.min(maxDelayMs, 1000 * 2 ** Math.min(20, counted.hits - delayAfter));
    const claimed = await this.pool.query(
      `UPDATE ${this.table} SET "blocked_until" = now() + $2 * interval '1 millisecond'
       WHERE "key" = $1 AND COALESCE("blocked_until" <= now(), true)`,
      [accountKey, delayMs],
    );
    if (claimed.rowCount === 1) return { allowed: true };
    return this.refuse('ACCOUNT_DELAY', counted.blocked_in, email, block);
  }

  /** A wrong password (or an unknown or unverified account) from `block`: counted for the pair and the account. */
  async failed(email: string, block: string): Promise<void> {
    const { account, accountKey, pairKey } = this.keys(email, block);
    const windowMs = this.config.throttle.windowMs;
    await this.pool.query(
      `INSERT INTO ${this.table} AS t ("key", "hits", "expires_at", "blocked_until")
         SELECT k, 1, now() + $2 * interval '1 millisecond', NULL FROM unnest($1::text[]) AS k
       ON CONFLICT ("key") DO UPDATE SET
         "hits" = CASE WHEN t."expires_at" <= now() THEN 1 ELSE t."hits" + 1 END,
         "expires_at" = CASE WHEN t."expires_at" <= now() THEN now() + $2 * interval '1 millisecond' ELSE t."expires_at" END`,
      [[pairKey, accountKey], windowMs],
    );
    this.logger.warn({ event: 'portal.sign-in.failed', account, address: block });
    this.audit.report({ kind: 'sign-in-failed', ...auditedPerson(email, block) });
  }

  /** The right password from `block`: the pair's failures are forgotten and the pair is known as the owner's. */
  async succeeded(email: string, block: string): Promise<void> {
    const { pairKey } = this.keys(email, block);
    await this.pool.query(`DELETE FROM ${this.table} WHERE "key" = $1`, [pairKey]);
    await this.remember(email, block);
    this.audit.report({ kind: 'sign-in', ...auditedPerson(email, block) });
  }

  /**
   * `block` proved it is the owner's (a verification with the password, a reset through the mailed link, a sign-in):
   * for 30 days the account's delay never applies to it, however many guesses come from elsewhere.
   */
  async remember(email: string, block: string): Promise<void> {
    const { knownKey } = this.keys(email, block);
    await this.pool.query(
      `INSERT INTO ${this.table} ("key", "hits", "expires_at") VALUES ($1, 1, now() + $2 * interval '1 millisecond')
       ON CONFLICT ("key") DO UPDATE SET "expires_at" = EXCLUDED."expires_at"`,
      [knownKey, KNOWN_PAIR_MS],
    );
  }

  /** A successful password reset: every failure counted against the account, from every address, is lifted. */
  async lift(email: string): Promise<void> {
    const { account, accountKey } = this.keys(email, 'none');
    await this.pool.query(`DELETE FROM ${this.table} WHERE "key" = $1 OR "key" LIKE $2`, [
      accountKey,
      `sign-in-pair:${account}:%`,
    ]);
  }

  private refuse(code: 'PAIR_LIMIT' | 'ACCOUNT_DELAY', seconds: number, email: string, block: string): SignInVerdict {
    const account = emailHash(email);
    this.logger.warn({ event: 'portal.sign-in.throttled', code, account, address: block, retryAfterSeconds: seconds });
    this.audit.report({ kind: 'lockout', reason: code, ...auditedPerson(email, block) });
    return { allowed: false, code, retryAfterSeconds: seconds };
  }
}
