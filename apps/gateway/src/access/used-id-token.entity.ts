import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * An ID token already exchanged for a person's admin token (docs/sso.md): its SHA-256, kept until it is too old to be
 * taken anyway. A second exchange of the same token (a replay) meets this row, on any instance.
 */
@Entity({ name: 'used_id_tokens' })
export class UsedIdTokenEntity {
  @PrimaryColumn({ name: 'token_hash', type: 'char', length: 64, primaryKeyConstraintName: 'PK_used_id_tokens' })
  tokenHash!: string;

  @Index('IDX_used_id_tokens_expires_at')
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;
}
