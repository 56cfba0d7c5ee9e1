import { Column, CreateDateColumn, Entity, PrimaryColumn, Unique } from 'typeorm';

/** A developer's account: an email (stored lower-cased, unique), an argon2id hash, and the consumer it owns. */
@Entity({ name: 'accounts' })
@Unique('UQ_accounts_email', ['email'])
export class AccountEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_accounts' })
  id!: string;

  @Column({ type: 'varchar', length: 254 })
  email!: string;

  /** argon2id, PHC string (algorithm, parameters and salt included). */
  @Column({ name: 'password_hash', type: 'varchar', length: 255 })
  passwordHash!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'verified_at', type: 'timestamptz', nullable: true })
  verifiedAt!: Date | null;

  /** The gateway consumer created for it on verification (through the admin API). */
  @Column({ name: 'consumer_name', type: 'varchar', length: 64, nullable: true })
  consumerName!: string | null;
}
