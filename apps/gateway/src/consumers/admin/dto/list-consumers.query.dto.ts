import { EMAIL_ADDRESS_MAX_LENGTH, IsIntegerInRange, ParseDecimalInteger } from '@app/contract';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { PAGE_SIZE } from '../../../admin-conventions/page-size';
import { IsConsumerEmail } from '../../consumer-email';
import { IsConsumerName } from '../../consumer-name';

export class ListConsumersQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: PAGE_SIZE.min, maximum: PAGE_SIZE.max, default: PAGE_SIZE.default })
  @IsOptional()
  @ParseDecimalInteger()
  @IsIntegerInRange(PAGE_SIZE.min, PAGE_SIZE.max)
  limit?: number;

  @ApiPropertyOptional({
    description: 'Only consumers whose name starts with it (case-sensitive), paged the same way.',
    example: 'acme',
  })
  @IsOptional()
  @IsString()
  @IsConsumerName()
  prefix?: string;

  @ApiPropertyOptional({
    format: 'email',
    maxLength: EMAIL_ADDRESS_MAX_LENGTH,
    description: 'Only consumers with this contact email (exact, case-insensitive); combines with `prefix`.',
    example: 'ada@example.com',
  })
  @IsOptional()
  @IsString()
  @IsConsumerEmail()
  email?: string;

  @ApiPropertyOptional({ description: 'The `next` of the previous page: consumers whose name sorts after it.' })
  @IsOptional()
  @IsString()
  @IsConsumerName()
  after?: string;
}
