import { IsDateTime, OptionalButNotNull } from '@app/contract';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { PLAN_NAMES, PlanName } from '../../../plans/plans';
import { CONSUMER_NAME_PATTERN, IsConsumerName } from '../../consumer-name';
import { AlertThresholdsBody } from './alert-thresholds.dto';
import { ALLOWED_ADDRESSES_PROPERTY, IsAllowedAddresses } from './allowed-addresses.dto';
import { LimitsDto } from './limits.dto';

export const IMPORT_BATCH_MAX = 500;
const SHA256_HEX = /^[0-9a-f]{64}$/;
/**
 * 1-16 characters, none of them a control character (NUL included) or half a surrogate pair. Unicode property
 * escapes: not written into the OpenAPI document as a pattern (tools read patterns without the `u` flag).
 */
const KEY_HINT = /^[^\p{Cc}\p{Cs}]{1,16}$/u;
const KEY_HINT_RULE = '1-16 characters, no control characters';
const DATE_TIME = { format: 'date-time' } as const;

/** A key of the file: its SHA-256 (the key itself is never stored nor exported); everything else has a default. */
export class FileKeyDto {
  @ApiProperty({ pattern: SHA256_HEX.source, description: 'SHA-256 of the key, lower-case hex.' })
  @Matches(SHA256_HEX, { message: 'keyHash must be a SHA-256 hex digest' })
  keyHash!: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 16,
    example: 'petk_AbCd…',
    description: `What lists show of the key (${KEY_HINT_RULE}). Default: sha256: and the hash's first 8 characters.`,
  })
  @IsOptional()
  @IsString()
  @Matches(KEY_HINT, { message: `keyHint must be ${KEY_HINT_RULE}` })
  keyHint?: string;

  @ApiPropertyOptional({ ...DATE_TIME, description: 'Default: when it is imported.' })
  @OptionalButNotNull()
  @IsDateTime()
  createdAt?: string;

  @ApiPropertyOptional({ ...DATE_TIME, description: 'When it stops working (none: it does not expire).' })
  @OptionalButNotNull()
  @IsDateTime()
  expiresAt?: string;

  @ApiPropertyOptional({ ...DATE_TIME, description: 'Set: the key is revoked (an import never un-revokes a key).' })
  @OptionalButNotNull()
  @IsDateTime()
  revokedAt?: string;

  @ApiPropertyOptional({
    ...ALLOWED_ADDRESSES_PROPERTY,
    description:
      "Where the key may be used from, within its consumer's allowedAddresses (docs/oauth.md), stored on their network address; null: anywhere its consumer allows; absent: left as it is.",
  })
  @IsOptional()
  @IsAllowedAddresses()
  allowedAddresses?: string[] | null;
}

/** The one-key form of earlier files: key fields at the top level. Ignored when `keys` is given. */
const usesTopLevelKey = (c: FileConsumerDto) =>
  c.keyHash !== undefined ||
  (c.keys === undefined && (c.keyHint !== undefined || c.expiresAt !== undefined || c.revokedAt !== undefined));

/**
 * One consumer of the consumers file. The least a person writes: `name` and `plan` (and `limits` on a custom
 * plan), with `keys: [{"keyHash": ...}]`, or none at all. Export writes every field; both forms are accepted.
 */
export class FileConsumerDto {
  @ApiProperty({
    pattern: CONSUMER_NAME_PATTERN.source,
    description: 'Matched by name: created, or brought in line with the file.',
  })
  @IsString()
  @IsConsumerName()
  name!: string;

  @ApiProperty({ enum: PLAN_NAMES })
  @IsIn(PLAN_NAMES, { message: `plan must be one of ${PLAN_NAMES.join(', ')}` })
  plan!: PlanName;

  @ApiPropertyOptional({
    type: LimitsDto,
    description: "Its own limits (required on a custom plan); absent: the plan's.",
  })
  @IsOptional()
  @IsObject({ message: 'limits must be an object' })
  @ValidateNested()
  @Type(() => LimitsDto)
  limits?: LimitsDto;

  @ApiPropertyOptional({
    ...DATE_TIME,
    description: "When the consumer was created (default: when it is imported); in the one-key form, the key's too.",
  })
  @OptionalButNotNull()
  @IsDateTime()
  createdAt?: string;

  @ApiPropertyOptional({
    ...DATE_TIME,
    description: 'Set: the consumer is disabled (since then). Absent: left as it is (an import never enables).',
  })
  @OptionalButNotNull()
  @IsDateTime()
  disabledAt?: string;

  @ApiPropertyOptional({
    ...DATE_TIME,
    description: 'Its own billing anchor (docs/billing.md); absent: left as it is.',
  })
  @OptionalButNotNull()
  @IsDateTime()
  billingAnchor?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 2_000_000_000,
    description: 'Its own monthly quota; absent: left as it is.',
  })
  @IsOptional()
  @IsInt({ message: 'perMonth must be an integer' })
  @Min(1, { message: 'perMonth must be at least 1' })
  @Max(2_000_000_000, { message: 'perMonth must be at most 2000000000' })
  perMonth?: number;

  @ApiPropertyOptional({
    description:
      'Prepaid credits in force (true) or ended (false); absent: left as it is. Never a balance (docs/billing.md).',
  })
  @IsOptional()
  @IsBoolean({ message: 'creditsEnabled must be true or false' })
  creditsEnabled?: boolean;

  @ApiPropertyOptional({
    type: 'object',
    properties: { amount: { type: 'integer' }, every: { type: 'string', enum: ['day', 'month'] } },
    description: 'Its own credit refill `{amount, every}`; absent: left as it is.',
  })
  @IsOptional()
  @IsObject({ message: 'creditRefill must be an object' })
  creditRefill?: { amount: number; every: 'day' | 'month' };

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'integer' },
    description: 'Its own cost per public operation; absent: left as it is.',
  })
  @IsOptional()
  @IsObject({ message: 'costs must be an object' })
  costs?: Record<string, number>;

  @ApiPropertyOptional({
    type: AlertThresholdsBody,
    nullable: true,
    description:
      "Its own alert thresholds (docs/alerts.md), as PATCH /consumers/{name}/billing takes them; null (or {}): its plan's; absent: left as it is.",
  })
  @IsOptional()
  @IsObject({ message: 'alerts must be {"thresholdsPercent": [...], "creditsLowBalance": n} or null' })
  @ValidateNested()
  @Type(() => AlertThresholdsBody)
  alerts?: AlertThresholdsBody | null;

  @ApiPropertyOptional({
    ...ALLOWED_ADDRESSES_PROPERTY,
    description:
      'Where its keys and tokens may be used from (docs/oauth.md), stored on their network address; null: anywhere; absent: left as it is.',
  })
  @IsOptional()
  @IsAllowedAddresses()
  allowedAddresses?: string[] | null;

  @ApiPropertyOptional({
    type: [FileKeyDto],
    description:
      'Every key of the consumer, matched by hash (added, or revoked or given other allowedAddresses when the file says so).',
  })
  @IsOptional()
  @IsObject({ each: true, message: 'each entry of keys must be an object' })
  @IsArray({ message: 'keys must be an array' })
  @ValidateNested({ each: true })
  @Type(() => FileKeyDto)
  keys?: FileKeyDto[];

  @ApiPropertyOptional({
    pattern: SHA256_HEX.source,
    description: "One-key form (earlier files): the key's SHA-256. Ignored when `keys` is given.",
  })
  @ValidateIf(usesTopLevelKey)
  @Matches(SHA256_HEX, { message: 'keyHash must be a SHA-256 hex digest' })
  keyHash?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 16,
    description: `One-key form: the key's hint (${KEY_HINT_RULE}). Ignored when \`keys\` is given.`,
  })
  @IsOptional()
  @IsString()
  @Matches(KEY_HINT, { message: `keyHint must be ${KEY_HINT_RULE}` })
  keyHint?: string;

  @ApiPropertyOptional({ ...DATE_TIME, description: "One-key form: the key's expiry. Ignored when `keys` is given." })
  @OptionalButNotNull()
  @IsDateTime()
  expiresAt?: string;

  @ApiPropertyOptional({
    ...DATE_TIME,
    description: 'One-key form: set, the key is revoked. Ignored when `keys` is given.',
  })
  @OptionalButNotNull()
  @IsDateTime()
  revokedAt?: string;
}

export class ImportConsumersDto {
  @ApiProperty({ type: [FileConsumerDto], maxItems: IMPORT_BATCH_MAX })
  // With stopAtFirstError, the rule nearest the property is checked (and reported) first: that it is there, then
  // that it is an array.
  @IsObject({ each: true, message: 'each entry of consumers must be an object' })
  @ArrayMaxSize(IMPORT_BATCH_MAX, { message: `consumers takes at most ${IMPORT_BATCH_MAX} entries per request` })
  @IsArray({ message: 'consumers must be an array' })
  @IsDefined({ message: 'consumers is required' })
  @ValidateNested({ each: true })
  @Type(() => FileConsumerDto)
  consumers!: FileConsumerDto[];
}
