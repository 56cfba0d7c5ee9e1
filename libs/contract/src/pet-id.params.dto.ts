import { ApiProperty } from '@nestjs/swagger';
import { ID_RANGE } from './limits';
import { INT64_ID } from './pet.dto';
import { IsIntegerInRange, ParseDecimalInteger, Required } from './validators';

/** Path of getPet (spec 4.3): a positive integer within JSON's exact range, else 400. */
export class PetIdParamsDto {
  @ApiProperty({ ...INT64_ID, description: 'Identifier of the animal to retrieve.' })
  @ParseDecimalInteger()
  @Required()
  @IsIntegerInRange(ID_RANGE.min, ID_RANGE.max)
  petId!: number;
}
