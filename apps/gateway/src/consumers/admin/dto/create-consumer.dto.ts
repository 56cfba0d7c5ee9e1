import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';
import { PLAN_NAMES, PlanName } from '../../../plans/plans';
import { EMAIL_ADDRESS_MAX_LENGTH, IsDateTime, OptionalButNotNull } from '@app/contract';
import { IsConsumerEmail } from '../../consumer-email';
import { CONSUMER_NAME_PATTERN, IsConsumerName } from '../../consumer-name';
import { LimitsDto } from './limits.dto';

export class CreateConsumerDto {
  @ApiPropertyOptional({
    pattern: CONSUMER_NAME_PATTERN.source,
    example: 'acme',
    description: 'Unique. Generated from the plan when omitted.',
  })
  @IsOptional()
  @IsString()
  @IsConsumerName()
  name?: string;

  @ApiProperty({ enum: PLAN_NAMES, example: 'pro' })
  @IsIn(PLAN_NAMES, { message: `plan must be one of ${PLAN_NAMES.join(', ')}` })
  plan!: PlanName;

  @ApiPropertyOptional({ type: LimitsDto, description: 'Required on a custom plan (enterprise).' })
  @IsOptional()
  @IsObject({ message: 'limits must be an object' })
  @ValidateNested()
  @Type(() => LimitsDto)
  limits?: LimitsDto;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the first key stops working (none: it does not expire).',
  })
  @OptionalButNotNull()
  @IsDateTime()
  expiresAt?: string;

  @ApiPropertyOptional({
    format: 'email',
    maxLength: EMAIL_ADDRESS_MAX_LENGTH,
    example: 'ada@example.com',
    description:
      "A contact address (the portal passes the developer's): stored lower-cased, searchable with `?email=`.",
  })
  @IsOptional()
  @IsConsumerEmail()
  email?: string;
}
