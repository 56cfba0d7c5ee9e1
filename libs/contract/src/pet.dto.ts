import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsEnum, IsString } from 'class-validator';
import { ID_RANGE, NAME_RULES } from './limits';
import { PET_STATUS_VALUES, PetStatus } from './pet-status.enum';
import { IsIntegerInRange, IsPetName, OptionalButNotNull, Required } from './validators';

export const INT64_ID = {
  type: 'integer',
  format: 'int64',
  minimum: ID_RANGE.min,
  maximum: ID_RANGE.max,
} as const;

const STATUS_MESSAGE = `$property must be one of: ${PET_STATUS_VALUES.join(', ')}`;

/** Request body of createPet (spec 2.1). The same class validates in the pets service and documents the gateway. */
@ApiSchema({ name: 'NewPet', description: 'An animal to add. Unknown fields are rejected with 400.' })
export class NewPetDto {
  @ApiProperty({
    description:
      `The animal's name: ${NAME_RULES.minLength} to ${NAME_RULES.maxLength} Unicode characters, not blank, ` +
      'without control characters, well-formed Unicode. Stored and returned exactly as sent (not trimmed).',
    minLength: NAME_RULES.minLength,
    maxLength: NAME_RULES.maxLength,
    pattern: NAME_RULES.pattern,
    example: 'Rex',
  })
  @Required()
  @IsString({ message: '$property must be a string' })
  @IsPetName()
  name!: string;

  @ApiProperty({
    ...INT64_ID,
    description:
      'Identifier of the category the animal belongs to. A JSON integer from 1 to 2^53-1 ' +
      '(larger int64 values cannot be represented exactly in JSON clients and are refused, never rounded).',
    example: 1,
  })
  @Required()
  @IsIntegerInRange(ID_RANGE.min, ID_RANGE.max)
  categoryId!: number;

  @ApiPropertyOptional({
    enum: PetStatus,
    enumName: 'PetStatus',
    description: 'Availability status. When omitted, the animal has no status: none is assumed.',
  })
  @OptionalButNotNull()
  @IsEnum(PetStatus, { message: STATUS_MESSAGE })
  status?: PetStatus;
}

/** Response body: a NewPet plus its id (spec 2.2). `status` is absent, never null, when it was not set. */
@ApiSchema({ name: 'Pet', description: 'An animal of the store.' })
export class PetDto {
  @ApiProperty({ ...INT64_ID, description: 'Unique identifier, assigned by the service on creation.', example: 1 })
  id!: number;

  @ApiProperty({ description: "The animal's name, as it was sent.", example: 'Rex' })
  name!: string;

  @ApiProperty({ ...INT64_ID, description: 'Identifier of the category the animal belongs to.', example: 1 })
  categoryId!: number;

  @ApiPropertyOptional({
    enum: PetStatus,
    enumName: 'PetStatus',
    description: 'Availability status; absent when none was set.',
  })
  status?: PetStatus;
}

export { STATUS_MESSAGE };
