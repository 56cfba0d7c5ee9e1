import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { ConsumerEntity } from './consumer.entity';

/** One key of a consumer: only its SHA-256 is stored, looked up through a unique index. */
@Entity({ name: 'api_keys' })
@Unique('UQ_api_keys_key_hash', ['keyHash'])
@Index('IDX_api_keys_consumer_id', ['consumerId'])
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_api_keys' })
  id!: string;

  @Column({ name: 'consumer_id', type: 'uuid' })
  consumerId!: string;

  // One way only (a key's consumer): the consumer's keys are read by consumer_id, never through a relation.
  @ManyToOne(() => ConsumerEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'consumer_id', foreignKeyConstraintName: 'FK_api_keys_consumer' })
  consumer?: ConsumerEntity;

  @Column({ name: 'key_hash', type: 'char', length: 64 })
  keyHash!: string;

  /** The prefix and first characters, to recognise a key in a list; never enough to use it. */
  @Column({ type: 'varchar', length: 16 })
  hint!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  /** Set by a rotation: the key that replaced this one (a key is rotated once; it works on until its overlap ends). */
  @Column({ name: 'replaced_by', type: 'uuid', nullable: true })
  replacedBy!: string | null;

  /** Where its key may be used from: CIDR ranges, normalized (allowed-addresses.ts); null: anywhere. */
  @Column({ name: 'allowed_addresses', type: 'text', array: true, nullable: true })
  allowedAddresses!: string[] | null;
}
