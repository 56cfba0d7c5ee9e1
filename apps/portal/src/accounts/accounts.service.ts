import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { isUniqueViolation } from '@app/database';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { PORTAL_CONFIG, PortalConfig } from '../config/portal.config';
import { Mailer } from '@app/mail';
import { AccountTokenEntity, AccountTokenPurpose } from './account-token.entity';
import { AccountEntity } from './account.entity';
import { AfterAnswer } from './after-answer';
import { hashPassword, verifyPassword } from '../credentials/passwords';

const VERIFY_TTL_MS = 24 * 60 * 60 * 1000;
const RESET_TTL_MS = 60 * 60 * 1000;
/** A mailed link that links a provider identity to an existing account (docs/sso.md). */
export const LINK_TTL_MS = 60 * 60 * 1000;

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** What a verification answers, by code: the page is chosen by it. */
export type VerifyOutcome =
  { code: 'VERIFIED'; account: AccountEntity } | { code: 'LINK_INVALID' } | { code: 'WRONG_PASSWORD'; email: string };

/**
 * Accounts: sign-up, verification and reset links (single-use tokens, only their SHA-256 stored), sign-in.
 * - Nothing here tells a caller whether an email has an account: sign-up and reset answer before any of their
 *   email-dependent work (AfterAnswer), and sign-in does one argon2 verify either way.
 * - An unverified account belongs to nobody yet: a new sign-up for its address replaces its password and kills its
 *   links, and verification asks for the password. Whoever verifies proves both the mailbox and the password, so a
 *   first registrant who is not the mailbox's owner (pre-account hijacking) never keeps the account.
 * - Verifying the account or changing its password kills every unused link of it (verify and reset alike).
 */
@Injectable()
export class AccountsService {
  private readonly logger = new Logger('Accounts');

  constructor(
    private readonly dataSource: DataSource,
    private readonly mailer: Mailer,
    private readonly afterAnswer: AfterAnswer,
    @Inject(PORTAL_CONFIG) private readonly config: PortalConfig,
  ) {}

  private get accounts() {
    return this.dataSource.getRepository(AccountEntity);
  }

  /** Answers at once; the sign-up itself runs after the answer (register). */
  signUp(email: string, password: string): void {
    this.afterAnswer.run('A sign-up', () => this.register(email, password));
  }

  /** Answers at once; the reset mail (for a known email only) is prepared after the answer. */
  requestReset(email: string): void {
    this.afterAnswer.run('A reset request', () => this.sendReset(email));
  }

  /** The sign-up's work, for a known and an unknown address alike: one argon2 hash, one lookup, one mail. */
  async register(email: string, password: string): Promise<void> {
    const passwordHash = await hashPassword(password);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const existing = await this.accounts.findOneBy({ email });
      if (existing?.verifiedAt) {
        // The owner of the address learns of the attempt; the visitor saw what a new sign-up sees.
        this.mailer.sendLater({
          to: email,
          subject: 'Someone tried to sign up with your email',
          text: `An account already exists for this address. Sign in at ${this.link('/login')}, or reset your password at ${this.link('/reset')}.`,
        });
        return;
      }
      let accountId: string | undefined;
      if (existing) {
        // Still unverified: the newest registrant's password replaces the pending one, and older links die.
        accountId = await this.dataSource.transaction(async (manager) => {
          const updated = await manager.update(
            AccountEntity,
            { id: existing.id, verifiedAt: IsNull() },
            { passwordHash },
          );
          if (!updated.affected) return undefined;
          await this.killLinks(manager, existing.id);
          return existing.id;
        });
      } else {
        const id = randomUUID();
        try {
          await this.accounts.insert({ id, email, passwordHash, verifiedAt: null, consumerName: null });
          accountId = id;
        } catch (error) {
          if (!isUniqueViolation(error)) throw error;
        }
      }
      if (accountId === undefined) continue; // raced with another sign-up or a verification: look again
      const token = await this.issueToken(accountId, 'verify', VERIFY_TTL_MS);
      this.mailer.sendLater({
        to: email,
        subject: 'Verify your email for the Pet store developer portal',
        text: `Welcome! Open this link to verify your email and get your API key (valid 24 hours, once; it asks for the password you signed up with):\n\n${this.link(`/verify?token=${token}`)}\n`,
      });
      return;
    }
  }

  /**
   * Verifies the account a link names when `password` is its password. A wrong password leaves the link usable (only
   * the mailbox's owner holds it); a right one uses it and kills every other unused link of the account.
   */
  async verify(token: string, password: string): Promise<VerifyOutcome> {
    const link = await this.dataSource
      .getRepository(AccountTokenEntity)
      .findOneBy({ tokenHash: hashToken(token), purpose: 'verify', usedAt: IsNull() });
    const account = link && link.expiresAt.getTime() > Date.now() ? await this.find(link.accountId) : null;
    // An unknown link costs no argon2 (a link is a secret of its own: nothing to hide about it).
    if (!account) return { code: 'LINK_INVALID' };
    if (!(await verifyPassword(account.passwordHash, password)))
      return { code: 'WRONG_PASSWORD', email: account.email };
    const verified = await this.dataSource.transaction(async (manager) => {
      // The link is used only if it is still unused: a sign-up that replaced the password meanwhile killed it.
      if (!(await this.useToken(manager, token, 'verify'))) return false;
      await manager.update(AccountEntity, { id: account.id, verifiedAt: IsNull() }, { verifiedAt: () => 'now()' });
      await this.killLinks(manager, account.id);
      return true;
    });
    if (!verified) return { code: 'LINK_INVALID' };
    return { code: 'VERIFIED', account: (await this.find(account.id))! };
  }

  /**
   * The email of the account a usable verification link names, for its form's username field (a password manager
   * pairs the password with it). The link's holder has the mail that names the address: nothing is disclosed.
   */
  async verifyLinkEmail(token: string): Promise<string | undefined> {
    if (token === '') return undefined;
    const link = await this.dataSource
      .getRepository(AccountTokenEntity)
      .findOneBy({ tokenHash: hashToken(token), purpose: 'verify', usedAt: IsNull() });
    if (!link || link.expiresAt.getTime() <= Date.now()) return undefined;
    return (await this.find(link.accountId))?.email;
  }

  async signIn(email: string, password: string): Promise<AccountEntity | undefined> {
    const account = await this.accounts.findOneBy({ email });
    const ok = await verifyPassword(account?.passwordHash, password);
    return ok ? (account ?? undefined) : undefined;
  }

  findByEmail(email: string): Promise<AccountEntity | null> {
    return this.accounts.findOneBy({ email });
  }

  /** Whether `password` is the account's (one argon2 verify; false for an account without a password). */
  passwordMatches(account: AccountEntity, password: string): Promise<boolean> {
    return verifyPassword(account.passwordHash, password);
  }

  /**
   * An account for an email the identity provider asserted verified (docs/sso.md), in `manager`'s transaction:
   * - none has the email: a new verified account without a password;
   * - an unverified one has it (a sign-up whose mailbox was never proved: maybe someone else's, pre-registering the
   *   address): it is taken over as nobody's yet, its pending password dropped and its links killed, so whoever typed
   *   that password gets nothing; verified now;
   * - a verified one has it: undefined (its owner must prove it before a provider identity is linked to it).
   * Answers the account and whether it was made here. A sign-up racing with it: the unique email makes one lose.
   */
  async takeForProvider(
    manager: EntityManager,
    email: string,
  ): Promise<{ account: AccountEntity; created: boolean } | undefined> {
    const existing = await manager.findOneBy(AccountEntity, { email });
    if (existing?.verifiedAt) return undefined;
    if (existing) {
      const updated = await manager.update(
        AccountEntity,
        { id: existing.id, verifiedAt: IsNull() },
        { passwordHash: null, verifiedAt: () => 'now()' },
      );
      if (!updated.affected) return undefined;
      await this.killLinks(manager, existing.id);
      return { account: (await manager.findOneBy(AccountEntity, { id: existing.id }))!, created: false };
    }
    const id = randomUUID();
    await manager.insert(AccountEntity, {
      id,
      email,
      passwordHash: null,
      verifiedAt: () => 'now()',
      consumerName: null,
    });
    return { account: (await manager.findOneBy(AccountEntity, { id }))!, created: true };
  }

  /** A single-use link (1 h) that proves the account's mailbox for a provider identity's link; answers the token. */
  async issueLinkToken(accountId: string): Promise<string> {
    return this.issueToken(accountId, 'link', LINK_TTL_MS);
  }

  /** Uses a link token of `accountId` (once: two uses racing, one wins); whether it was usable. */
  async useLinkToken(token: string, accountId: string): Promise<boolean> {
    return (await this.useToken(this.dataSource.manager, token, 'link')) === accountId;
  }

  /** Mails the account's owner a link that links a provider identity (it works only in the browser that asked). */
  sendLinkMail(email: string, providerName: string, token: string): void {
    this.mailer.sendLater({
      to: email,
      subject: `Link ${providerName} to your Pet store developer portal account`,
      text: `Someone signed in with ${providerName} as ${email} and asked to link it to your portal account. If it was you, open this link in the same browser (valid 1 hour, once):\n\n${this.link(`/login/link/confirm?token=${token}`)}\n\nIf it was not you, ignore this mail: nothing is linked without it.`,
    });
  }

  private async sendReset(email: string): Promise<void> {
    const account = await this.accounts.findOneBy({ email });
    // An unknown address gets no mail (the visitor was answered the same page before this lookup).
    if (!account) return;
    const token = await this.issueToken(account.id, 'reset', RESET_TTL_MS);
    this.mailer.sendLater({
      to: email,
      subject: 'Reset your Pet store developer portal password',
      text: `Open this link to choose a new password (valid 1 hour, once):\n\n${this.link(`/reset/confirm?token=${token}`)}\n\nIf you did not ask for this, ignore this mail.`,
    });
  }

  /** Whether a reset token can still be used (the form is shown only then). */
  async resetTokenValid(token: string): Promise<boolean> {
    const found = await this.dataSource
      .getRepository(AccountTokenEntity)
      .findOneBy({ tokenHash: hashToken(token), purpose: 'reset', usedAt: IsNull() });
    return !!found && found.expiresAt.getTime() > Date.now();
  }

  /**
   * Sets a new password through a reset link: the link and every other unused link of the account die, every
   * session of the account ends (on every instance), and an unverified account is verified (the reset proves the
   * address). Answers the account's email (its sign-in throttle is lifted by the caller), or undefined.
   */
  async resetPassword(token: string, password: string): Promise<string | undefined> {
    if (!(await this.resetTokenValid(token))) return undefined;
    const passwordHash = await hashPassword(password);
    return this.dataSource.transaction(async (manager) => {
      const accountId = await this.useToken(manager, token, 'reset');
      if (!accountId) return undefined;
      await manager.update(AccountEntity, { id: accountId }, { passwordHash });
      await manager.update(AccountEntity, { id: accountId, verifiedAt: IsNull() }, { verifiedAt: () => 'now()' });
      await this.killLinks(manager, accountId);
      await manager.query(`DELETE FROM "${this.config.schema}"."session" WHERE "sess"->>'accountId' = $1`, [accountId]);
      return (await manager.findOneBy(AccountEntity, { id: accountId }))?.email;
    });
  }

  find(id: string): Promise<AccountEntity | null> {
    return this.accounts.findOneBy({ id });
  }

  async setConsumer(accountId: string, consumerName: string): Promise<void> {
    await this.accounts.update({ id: accountId }, { consumerName });
  }

  /** Deletes the unverified accounts created before `maxAgeMs` ago (their links go with them); answers how many. */
  async purgeUnverified(maxAgeMs: number): Promise<number> {
    const result = await this.accounts
      .createQueryBuilder()
      .delete()
      .where('"verified_at" IS NULL')
      .andWhere(`"created_at" < now() - :ms * interval '1 millisecond'`, { ms: maxAgeMs })
      .execute();
    return result.affected ?? 0;
  }

  /** Every unused link of the account, of any purpose, can no longer be used. */
  private async killLinks(manager: EntityManager, accountId: string): Promise<void> {
    await manager.update(AccountTokenEntity, { accountId, usedAt: IsNull() }, { usedAt: () => 'now()' });
  }

  private async issueToken(accountId: string, purpose: AccountTokenPurpose, ttlMs: number): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.dataSource.getRepository(AccountTokenEntity).insert({
      id: randomUUID(),
      accountId,
      purpose,
      tokenHash: hashToken(token),
      expiresAt: new Date(Date.now() + ttlMs),
      usedAt: null,
    });
    return token;
  }

  /** Marks a token used (one UPDATE: two uses racing, one wins) and answers its account, if it was usable. */
  private async useToken(
    manager: EntityManager,
    token: string,
    purpose: AccountTokenPurpose,
  ): Promise<string | undefined> {
    const [rows]: [Array<{ account_id: string }>, number] = await manager.query(
      `UPDATE "${this.config.schema}"."account_tokens" SET "used_at" = now() WHERE "token_hash" = $1 AND "purpose" = $2 AND "used_at" IS NULL AND "expires_at" > now() RETURNING "account_id"`,
      [hashToken(token), purpose],
    );
    if (rows.length === 0) this.logger.debug(`A ${purpose} token was refused (unknown, used or expired).`);
    return rows[0]?.account_id;
  }

  private link(appPath: string): string {
    return `${this.config.publicUrl}${this.config.basePath}${appPath}`;
  }
}
