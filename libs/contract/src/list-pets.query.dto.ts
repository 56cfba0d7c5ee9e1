import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsEnum } from 'class-validator';
import { LIST_LIMIT } from './limits';
import { PetStatus } from './pet-status.enum';
import { STATUS_MESSAGE } from './pet.dto';
import { IsIntegerInRange, OptionalButNotNull, ParseDecimalInteger } from './validators';

/** Query of listPets (spec 4.1). Unknown parameters are rejected with 400. */
export class ListPetsQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    format: 'int32',
    minimum: LIST_LIMIT.min,
    maximum: LIST_LIMIT.max,
    default: LIST_LIMIT.default,
    description: `Maximum number of animals returned (${LIST_LIMIT.min} to ${LIST_LIMIT.max}). Any other value, a non-integer or a repeated parameter is refused with 400.`,
  })
  @ParseDecimalInteger()
  @OptionalButNotNull()
  @IsIntegerInRange(LIST_LIMIT.min, LIST_LIMIT.max)
  limit?: number;

  @ApiPropertyOptional({
    enum: PetStatus,
    enumName: 'PetStatus',
    description: 'Only animals with this status are returned. An unknown value is refused with 400.',
  })
  @OptionalButNotNull()
  @IsEnum(PetStatus, { message: STATUS_MESSAGE })
  status?: PetStatus;
}
