import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsISO8601, IsObject, IsOptional, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { PLAN_NAMES, PlanName } from '../../plans/plans';
import { CONSUMER_NAME_PATTERN, IsConsumerName } from './consumer-name';
import { LimitsDto } from './limits.dto';

export const IMPORT_BATCH_MAX = 500;
const SHA256_HEX = /^[0-9a-f]{64}$/;

export class FileKeyDto {
  @ApiProperty({ pattern: SHA256_HEX.source })
  @Matches(SHA256_HEX, { message: 'keyHash must be a SHA-256 hex digest' })
  keyHash!: string;

  @ApiProperty()
  @IsString()
  @Length(1, 16)
  keyHint!: string;

  @ApiProperty({ format: 'date-time' })
  @IsISO8601({ strict: true }, { message: 'createdAt must be an ISO 8601 date-time' })
  createdAt!: string;

  @ApiPropertyOptional({ format: 'date-time' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'expiresAt must be an ISO 8601 date-time' })
  expiresAt?: string;

  @ApiPropertyOptional({ format: 'date-time' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'revokedAt must be an ISO 8601 date-time' })
  revokedAt?: string;
}

/** One consumer of the consumers file (today's format, plus an optional `keys` list written by export). */
export class FileConsumerDto extends FileKeyDto {
  @ApiProperty({ pattern: CONSUMER_NAME_PATTERN.source })
  @IsString()
  @IsConsumerName()
  name!: string;

  @ApiProperty({ enum: PLAN_NAMES })
  @IsIn(PLAN_NAMES, { message: `plan must be one of ${PLAN_NAMES.join(', ')}` })
  plan!: PlanName;

  @ApiPropertyOptional({ type: LimitsDto })
  @IsOptional()
  @IsObject({ message: 'limits must be an object' })
  @ValidateNested()
  @Type(() => LimitsDto)
  limits?: LimitsDto;

  @ApiPropertyOptional({ type: [FileKeyDto], description: 'Every key of the consumer; when present, the top-level key fields are ignored.' })
  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => FileKeyDto)
  keys?: FileKeyDto[];
}

export class ImportConsumersDto {
  @ApiProperty({ type: [FileConsumerDto], maxItems: IMPORT_BATCH_MAX })
  @IsArray({ message: 'consumers must be an array' })
  @ArrayMaxSize(IMPORT_BATCH_MAX, { message: `consumers takes at most ${IMPORT_BATCH_MAX} entries per request` })
  @ValidateNested({ each: true })
  @Type(() => FileConsumerDto)
  consumers!: FileConsumerDto[];
}
