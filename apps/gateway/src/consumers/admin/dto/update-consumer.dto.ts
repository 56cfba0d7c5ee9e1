import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsObject, IsOptional, ValidateNested } from 'class-validator';
import { PLAN_NAMES, PlanName } from '../../../plans/plans';
import { EMAIL_ADDRESS_MAX_LENGTH } from '@app/contract';
import { IsConsumerEmail } from '../../consumer-email';
import { ALLOWED_ADDRESSES_PROPERTY, IsAllowedAddresses } from './allowed-addresses.dto';
import { LimitsDto } from './limits.dto';

export class UpdateConsumerDto {
  @ApiPropertyOptional({ enum: PLAN_NAMES })
  @IsOptional()
  @IsIn(PLAN_NAMES, { message: `plan must be one of ${PLAN_NAMES.join(', ')}` })
  plan?: PlanName;

  @ApiPropertyOptional({ type: LimitsDto, nullable: true, description: "null: back to the plan's limits." })
  @IsOptional()
  @IsObject({ message: 'limits must be an object or null' })
  @ValidateNested()
  @Type(() => LimitsDto)
  limits?: LimitsDto | null;

  @ApiPropertyOptional({
    type: String,
    format: 'email',
    maxLength: EMAIL_ADDRESS_MAX_LENGTH,
    nullable: true,
    description: 'A contact address, stored lower-cased; null clears it.',
  })
  @IsOptional()
  @IsConsumerEmail()
  email?: string | null;

  @ApiPropertyOptional({
    ...ALLOWED_ADDRESSES_PROPERTY,
    description:
      "The IPv4 and IPv6 addresses and CIDR ranges its keys and tokens may be used from (the client address as the rate limits judge it: TRUST_PROXY), stored on their network address (an IPv4-mapped IPv6 range as the IPv4 range it means); a request from elsewhere gets 403 ADDRESS_NOT_ALLOWED, counted against its address's anonymous limit (as a bad key is), never on the consumer. null: anywhere. A key or client binding may be restricted further.",
  })
  @IsOptional()
  @IsAllowedAddresses()
  allowedAddresses?: string[] | null;
}
