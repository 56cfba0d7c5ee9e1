import { PetDto, PetStatus } from '@app/contract';
import { PetEntity } from './pet.entity';

/** The only way a pet leaves the service: exactly the contract's fields, `status` only when it is set. */
export function toPetDto(entity: PetEntity): PetDto {
  const pet: PetDto = { id: entity.id, name: entity.name, categoryId: entity.categoryId };
  if (entity.status !== null) pet.status = entity.status;
  return pet;
}

/** A row of the read path's statements (PetsService): bigint columns arrive from `pg` as strings. */
export interface PetRow {
  id: string;
  name: string;
  category_id: string;
  status: PetStatus | null;
}

/** The same answer as toPetDto, straight from a row (ids are exact numbers: see bigintToNumber). */
export function rowToPetDto(row: PetRow): PetDto {
  const pet: PetDto = { id: Number(row.id), name: row.name, categoryId: Number(row.category_id) };
  if (row.status !== null) pet.status = row.status;
  return pet;
}
