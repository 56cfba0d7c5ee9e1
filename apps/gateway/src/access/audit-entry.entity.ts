import { Column, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';

/** What an audit row says changed: `{field: {before, after}}`. */
export type AuditChanges = Record<string, { before: unknown; after: unknown }>;

/**
 * One line of the audit log (append-only: nothing updates or deletes it but the retention job, and the count of an
 * aggregate row of refusals). Written in the same transaction as the change it records. Never holds a key, a token
 * or a hash.
 */
@Entity({ name: 'audit_log' })
@Index('IDX_audit_log_at', ['at'])
@Unique('UQ_audit_log_aggregate_key', ['aggregateKey'])
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

  /** The target key's hint (`petk_F7WF…`, as every page names a key): never the key. */
  @Column({ name: 'target_key_hint', type: 'varchar', length: 16, nullable: true })
  targetKeyHint!: string | null;

  /** `{field: {before, after}}` of the fields that changed, or details of a refusal. */
  @Column({ type: 'jsonb', nullable: true })
  changes!: AuditChanges | null;

  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId!: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  source!: string | null;

  /** The end user behind a web app's call (`account:<id> <email>`, `operator:<name>`), as its token vouched. */
  @Column({ name: 'on_behalf_of', type: 'varchar', length: 320, nullable: true })
  onBehalfOf!: string | null;

  /** That end user's address, as the web app saw it. */
  @Column({ name: 'end_user_address', type: 'varchar', length: 64, nullable: true })
  endUserAddress!: string | null;

  /** How many calls the row stands for: 1, or the refusals counted on an aggregate row. */
  @Column({ type: 'integer', default: 1 })
  count!: number;

  /**
   * Set on an aggregate row only: `<status>|<minute>|<actor>|<source>`, unique, so that every instance adds its
   * refusals beyond the per-minute rows to one row (an upsert). Never shown.
   */
  @Column({ name: 'aggregate_key', type: 'varchar', length: 200, nullable: true, select: false })
  aggregateKey!: string | null;
}
