import { PetDto } from '@app/contract';
import { PetEntity } from './pet.entity';

/** The only way a pet leaves the service: exactly the contract's fields, `status` only when it is set. */
export function toPetDto(entity: PetEntity): PetDto {
  const pet: PetDto = { id: entity.id, name: entity.name, categoryId: entity.categoryId };
  if (entity.status !== null) pet.status = entity.status;
  return pet;
}
