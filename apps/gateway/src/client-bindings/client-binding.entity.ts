import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { ConsumerEntity } from '../consumers/consumer.entity';

/**
 * An OAuth client of a configured issuer bound to a consumer (docs/oauth.md): its access tokens authenticate as the
 * consumer, beside its keys. One consumer per (issuer, client id).
 */
@Entity({ name: 'client_bindings' })
@Unique('UQ_client_bindings_issuer_client', ['issuer', 'clientId'])
@Index('IDX_client_bindings_consumer_id', ['consumerId'])
export class ClientBindingEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_client_bindings' })
  id!: string;

  @Column({ name: 'consumer_id', type: 'uuid' })
  consumerId!: string;

  @ManyToOne(() => ConsumerEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'consumer_id', foreignKeyConstraintName: 'FK_client_bindings_consumer' })
  consumer?: ConsumerEntity;

  /** The issuer's URL, as OAUTH_ISSUERS names it (a token's `iss`). */
  @Column({ type: 'varchar', length: 2048 })
  issuer!: string;

  /** The token's `client_id` (or `sub`, as the issuer's entry says). */
  @Column({ name: 'client_id', type: 'varchar', length: 255 })
  clientId!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** Where its client's tokens may be used from: CIDR ranges, normalized (allowed-addresses.ts); null: anywhere. */
  @Column({ name: 'allowed_addresses', type: 'text', array: true, nullable: true })
  allowedAddresses!: string[] | null;
}
