import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { isUniqueViolation } from '@app/database';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, IsNull } from 'typeorm';
import { PORTAL_CONFIG, PortalConfig } from '../config/portal.config';
import { Mailer } from '../mail/mailer';
import { AccountTokenEntity, AccountTokenPurpose } from './account-token.entity';
import { AccountEntity } from './account.entity';
import { hashPassword, verifyPassword } from './passwords';

const VERIFY_TTL_MS = 24 * 60 * 60 * 1000;
const RESET_TTL_MS = 60 * 60 * 1000;

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Accounts: sign-up, verification and reset links (single-use tokens, only their SHA-256 stored), sign-in. Nothing
 * here tells a caller whether an email has an account: the answers and the work done (one argon2 hash or verify, a
 * mail sent in the background) are the same either way.
 */
@Injectable()
export class AccountsService {
  private readonly logger = new Logger('Accounts');

  constructor(
    private readonly dataSource: DataSource,
    private readonly mailer: Mailer,
    @Inject(PORTAL_CONFIG) private readonly config: PortalConfig,
  ) {}

  private get accounts() {
    return this.dataSource.getRepository(AccountEntity);
  }

  async signUp(email: string, password: string): Promise<void> {
    const passwordHash = await hashPassword(password);
    const existing = await this.accounts.findOneBy({ email });
    if (existing) {
      // The owner of the address learns of the attempt; the visitor sees what a new sign-up sees.
      this.mailer.sendLater({
        to: email,
        subject: 'Someone tried to sign up with your email',
        text: `An account already exists for this address. Sign in at ${this.link('/login')}, or reset your password at ${this.link('/reset')}.`,
      });
      return;
    }
    const account = this.accounts.create({
      id: randomUUID(),
      email,
      passwordHash,
      verifiedAt: null,
      consumerName: null,
    });
    try {
      await this.accounts.insert(account);
    } catch (error) {
      // Two sign-ups racing for one address: the loser is told nothing more than the winner.
      if (isUniqueViolation(error)) return;
      throw error;
    }
    const token = await this.issueToken(account.id, 'verify', VERIFY_TTL_MS);
    this.mailer.sendLater({
      to: email,
      subject: 'Verify your email for the Pet store developer portal',
      text: `Welcome! Open this link to verify your email and get your API key (valid 24 hours, once):\n\n${this.link(`/verify?token=${token}`)}\n`,
    });
  }

  /** The account a verification token names, now verified; undefined when the token is unknown, used or expired. */
  async verify(token: string): Promise<AccountEntity | undefined> {
    const accountId = await this.useToken(token, 'verify');
    if (!accountId) return undefined;
    await this.accounts.update({ id: accountId, verifiedAt: IsNull() }, { verifiedAt: () => 'now()' });
    return (await this.accounts.findOneBy({ id: accountId })) ?? undefined;
  }

  async signIn(email: string, password: string): Promise<AccountEntity | undefined> {
    const account = await this.accounts.findOneBy({ email });
    const ok = await verifyPassword(account?.passwordHash, password);
    return ok ? (account ?? undefined) : undefined;
  }

  async requestReset(email: string): Promise<void> {
    const account = await this.accounts.findOneBy({ email });
    // An unknown address gets no mail; the visitor sees the same page as for a known one (the mail goes later).
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

  async resetPassword(token: string, password: string): Promise<boolean> {
    const passwordHash = await hashPassword(password);
    const accountId = await this.useToken(token, 'reset');
    if (!accountId) return false;
    // The reset proves the address: an unverified account is verified by it too.
    await this.accounts.update({ id: accountId }, { passwordHash });
    // Whoever was signed in with the old password is signed out (every session of the account, on every instance).
    await this.dataSource.query(`DELETE FROM "${this.config.schema}"."session" WHERE "sess"->>'accountId' = $1`, [
      accountId,
    ]);
    await this.accounts.update({ id: accountId, verifiedAt: IsNull() }, { verifiedAt: () => 'now()' });
    return true;
  }

  find(id: string): Promise<AccountEntity | null> {
    return this.accounts.findOneBy({ id });
  }

  async setConsumer(accountId: string, consumerName: string): Promise<void> {
    await this.accounts.update({ id: accountId }, { consumerName });
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
  private async useToken(token: string, purpose: AccountTokenPurpose): Promise<string | undefined> {
    const [rows]: [Array<{ account_id: string }>, number] = await this.dataSource.query(
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
