import { NAME_RULES, PetStatus } from '@app/contract';
import { Column, Entity, Index, PrimaryColumn, ValueTransformer } from 'typeorm';

/**
 * `pg` returns bigint as a string: this is the one boundary where it becomes a number. Ids never exceed 2^53-1
 * (the identity sequence's MAXVALUE and the API's validation see to it), so the conversion is exact.
 */
export const bigintToNumber: ValueTransformer = {
  to: (value: number | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

@Entity({ name: 'pets' })
@Index('IDX_pets_status_id', ['status', 'id'])
export class PetEntity {
  @PrimaryColumn({
    type: 'bigint',
    generated: 'identity',
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: 'PK_pets',
    transformer: bigintToNumber,
  })
  id!: number;

  @Column({ type: 'varchar', length: NAME_RULES.maxLength })
  name!: string;

  @Column({ name: 'category_id', type: 'bigint', transformer: bigintToNumber })
  categoryId!: number;

  @Column({ type: 'enum', enum: PetStatus, enumName: 'pet_status', nullable: true })
  status!: PetStatus | null;
}
