import { Column, CreateDateColumn, Entity, PrimaryColumn, Unique } from 'typeorm';

/**
 * A developer's account: an email (stored lower-cased, unique), an argon2id hash (none for an account a provider sign-in
 * made: docs/sso.md), and the consumer it owns.
 */
@Entity({ name: 'accounts' })
@Unique('UQ_accounts_email', ['email'])
export class AccountEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_accounts' })
  id!: string;

  @Column({ type: 'varchar', length: 254 })
  email!: string;

  /** argon2id, PHC string (algorithm, parameters and salt included); null: made by a provider sign-in, no password. */
  @Column({ name: 'password_hash', type: 'varchar', length: 255, nullable: true })
  passwordHash!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'verified_at', type: 'timestamptz', nullable: true })
  verifiedAt!: Date | null;

  /** The gateway consumer created for it on verification (through the admin API). */
  @Column({ name: 'consumer_name', type: 'varchar', length: 64, nullable: true })
  consumerName!: string | null;
}
