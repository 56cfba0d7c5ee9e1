import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** What an audit row says changed: `{field: {before, after}}`. */
export type AuditChanges = Record<string, { before: unknown; after: unknown }>;

/**
 * One line of the audit log (append-only: nothing updates or deletes it but the retention job). Written in the
 * same transaction as the change it records. Never holds a key, a token or a hash.
 */
@Entity({ name: 'audit_log' })
@Index('IDX_audit_log_at', ['at'])
export class AuditEntryEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_audit_log' })
  id!: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  at!: Date;

  /** The admin token's id, or null for root (ADMIN_TOKEN) and unauthenticated callers. */
  @Column({ name: 'actor_id', type: 'uuid', nullable: true })
  actorId!: string | null;

  /** The token's name, `root`, or `anonymous` (a refused call). */
  @Column({ name: 'actor_name', type: 'varchar', length: 64 })
  actorName!: string;

  @Column({ type: 'varchar', length: 64 })
  action!: string;

  @Column({ name: 'target_consumer', type: 'varchar', length: 64, nullable: true })
  targetConsumer!: string | null;

  @Column({ name: 'target_key', type: 'uuid', nullable: true })
  targetKey!: string | null;

  @Column({ name: 'target_token', type: 'uuid', nullable: true })
  targetToken!: string | null;

  /** `{field: {before, after}}` of the fields that changed, or details of a refusal. */
  @Column({ type: 'jsonb', nullable: true })
  changes!: AuditChanges | null;

  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId!: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  source!: string | null;
}
