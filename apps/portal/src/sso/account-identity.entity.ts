import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { AccountEntity } from '../accounts/account.entity';

/**
 * A provider's identity linked to a portal account (docs/sso.md): the person is its issuer and subject, never its
 * email (an email may change at the provider, or be given to someone else). One identity, one account.
 */
@Entity({ name: 'account_identities' })
@Unique('UQ_account_identities_issuer_subject', ['issuer', 'subject'])
@Index('IDX_account_identities_account_id', ['accountId'])
export class AccountIdentityEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_account_identities' })
  id!: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId!: string;

  @Column({ type: 'varchar', length: 2048 })
  issuer!: string;

  @Column({ type: 'varchar', length: 255 })
  subject!: string;

  /** The email the provider asserted when the identity was linked (for operators; never looked up by). */
  @Column({ type: 'varchar', length: 254 })
  email!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'FK_account_identities_account' })
  account?: AccountEntity;
}
