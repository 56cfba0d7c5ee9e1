import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { AccountEntity } from './account.entity';

/** `link`: a mailed link that links a provider identity to the account (docs/sso.md). */
export type AccountTokenPurpose = 'verify' | 'reset' | 'link';

/** A single-use token of a link sent by mail (verification, password reset): only its SHA-256 is stored. */
@Entity({ name: 'account_tokens' })
@Unique('UQ_account_tokens_token_hash', ['tokenHash'])
@Index('IDX_account_tokens_account_id', ['accountId'])
export class AccountTokenEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_account_tokens' })
  id!: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId!: string;

  @Column({ type: 'varchar', length: 16 })
  purpose!: AccountTokenPurpose;

  @Column({ name: 'token_hash', type: 'char', length: 64 })
  tokenHash!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @Column({ name: 'used_at', type: 'timestamptz', nullable: true })
  usedAt!: Date | null;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'FK_account_tokens_account' })
  account?: AccountEntity;
}
