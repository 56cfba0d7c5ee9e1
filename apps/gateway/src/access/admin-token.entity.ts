import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, Unique } from 'typeorm';

/**
 * A scoped admin token (issue #24): only its SHA-256 is stored; the token itself (`adm_…`) is shown once. It may be
 * limited to the consumers it created (`ownConsumersOnly`) and to some plans. ADMIN_TOKEN (root) is not one of these.
 */
@Entity({ name: 'admin_tokens' })
@Unique('UQ_admin_tokens_token_hash', ['tokenHash'])
export class AdminTokenEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_admin_tokens' })
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  name!: string;

  @Column({ name: 'token_hash', type: 'char', length: 64 })
  tokenHash!: string;

  @Column({ type: 'varchar', length: 16 })
  hint!: string;

  @Column({ type: 'text', array: true })
  scopes!: string[];

  @Column({ name: 'own_consumers_only', type: 'boolean', default: false })
  ownConsumersOnly!: boolean;

  /** May name the end user behind its calls (X-On-Behalf-Of, X-End-User-Address): a web app's token. Root grants it. */
  @Column({ name: 'acts_for_users', type: 'boolean', default: false })
  actsForUsers!: boolean;

  /** Null: every plan. */
  @Column({ type: 'text', array: true, nullable: true })
  plans!: string[] | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** `root`, or the name and id of the token that created it. */
  @Column({ name: 'created_by', type: 'varchar', length: 128 })
  createdBy!: string;

  /** The token that created this one (null: root, or created before #36): revoking it revokes this one too. */
  @Index('IDX_admin_tokens_created_by_token')
  @Column({ name: 'created_by_token', type: 'uuid', nullable: true })
  createdByToken!: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;

  /** Updated at most once a minute per instance. */
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  /**
   * A person's short-lived session credential (docs/sso.md): who signed in, `<email> (<subject> at <issuer>)`; every
   * audit row its calls write names them. Null: a token created with POST /tokens.
   */
  @Column({ type: 'varchar', length: 320, nullable: true })
  person!: string | null;
}
