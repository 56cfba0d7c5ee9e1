import { EXPECTED_VOLUME_MAX, IsIntegerInRange, IsPlainText, MESSAGE_MAX, ParseDecimalInteger } from '@app/contract';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsDefined,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { PLAN_REQUEST_STATUSES, PlanRequestEntity, PlanRequestStatus } from '../../plan-request.entity';
import { PLAN_NAMES, PlanName } from '../../../plans/plans';
import { CONSUMER_NAME_PATTERN, IsConsumerName } from '../../../consumers/consumer-name';
import { PAGE_SIZE } from '../../../admin-conventions/page-size';

const LIMIT_MAX = 1_000_000_000;

/** The rule nearest the property is checked first (stopAtFirstError): the most basic one sits last. */
export class CreatePlanRequestDto {
  @ApiProperty({ pattern: CONSUMER_NAME_PATTERN.source, example: 'acme' })
  @IsString({ message: 'consumer must be a string' })
  @IsConsumerName()
  consumer!: string;

  @ApiProperty({ enum: PLAN_NAMES, example: 'pro', description: "A plan other than the consumer's current one." })
  @IsIn(PLAN_NAMES, { message: `requestedPlan must be one of ${PLAN_NAMES.join(', ')}` })
  requestedPlan!: PlanName;

  @ApiProperty({
    maxLength: EXPECTED_VOLUME_MAX,
    example: 'About 200,000 requests a day',
    description: 'One line of text: no control characters.',
  })
  @IsPlainText()
  @MaxLength(EXPECTED_VOLUME_MAX, { message: `expectedVolume must be at most ${EXPECTED_VOLUME_MAX} characters` })
  @MinLength(1, { message: 'expectedVolume must not be empty' })
  @IsString({ message: 'expectedVolume must be a string' })
  @IsDefined({ message: 'expectedVolume is required' })
  expectedVolume!: string;

  @ApiPropertyOptional({
    maxLength: MESSAGE_MAX,
    example: 'We are launching a shelter app in March.',
    description: 'Text of several lines: no control characters but tab and line breaks.',
  })
  @IsOptional()
  @IsPlainText({ multiLine: true })
  @MaxLength(MESSAGE_MAX, { message: `message must be at most ${MESSAGE_MAX} characters` })
  @IsString({ message: 'message must be a string' })
  message?: string;
}

/** Custom limits for the new plan (required on Enterprise), as PATCH /consumers takes them; both or neither. */
export class ApprovePlanRequestDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: LIMIT_MAX, example: 5000 })
  @ValidateIf((o: ApprovePlanRequestDto) => o.perMinute !== undefined || o.perDay !== undefined)
  @IsInt({ message: 'perMinute must be an integer' })
  @Min(1, { message: 'perMinute must be at least 1' })
  @Max(LIMIT_MAX, { message: `perMinute must be at most ${LIMIT_MAX}` })
  @IsDefined({ message: 'perMinute is required with perDay' })
  perMinute?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: LIMIT_MAX, example: 2_000_000 })
  @ValidateIf((o: ApprovePlanRequestDto) => o.perMinute !== undefined || o.perDay !== undefined)
  @IsInt({ message: 'perDay must be an integer' })
  @Min(1, { message: 'perDay must be at least 1' })
  @Max(LIMIT_MAX, { message: `perDay must be at most ${LIMIT_MAX}` })
  @IsDefined({ message: 'perDay is required with perMinute' })
  perDay?: number;
}

export class DeclinePlanRequestDto {
  @ApiProperty({
    maxLength: MESSAGE_MAX,
    example: 'Pro needs a company address: write to sales@example.com.',
    description: 'Shown to the requester. Text of several lines: no control characters but tab and line breaks.',
  })
  @IsPlainText({ multiLine: true })
  @MaxLength(MESSAGE_MAX, { message: `note must be at most ${MESSAGE_MAX} characters` })
  @MinLength(1, { message: 'note must not be empty' })
  @IsString({ message: 'note must be a string' })
  @IsDefined({ message: 'note is required' })
  note!: string;
}

export class PlanRequestParams {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'id must be a UUID' })
  id!: string;
}

export class ListPlanRequestsQueryDto {
  @ApiPropertyOptional({ enum: PLAN_REQUEST_STATUSES })
  @IsOptional()
  @IsIn(PLAN_REQUEST_STATUSES, { message: `status must be one of ${PLAN_REQUEST_STATUSES.join(', ')}` })
  status?: PlanRequestStatus;

  @ApiPropertyOptional({ pattern: CONSUMER_NAME_PATTERN.source, description: "Only this consumer's requests." })
  @IsOptional()
  @IsString()
  @IsConsumerName()
  consumer?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: PAGE_SIZE.min, maximum: PAGE_SIZE.max, default: PAGE_SIZE.default })
  @IsOptional()
  @ParseDecimalInteger()
  @IsIntegerInRange(PAGE_SIZE.min, PAGE_SIZE.max)
  limit?: number;

  @ApiPropertyOptional({ format: 'uuid', description: 'The `next` of the previous page.' })
  @IsOptional()
  @IsUUID('all', { message: 'after must be the next of a previous page' })
  after?: string;
}

export class PlanRequestResponse {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ example: 'acme' }) consumer!: string;
  @ApiProperty({ enum: PLAN_NAMES, description: 'The plan when the request was made.' }) currentPlan!: string;
  @ApiProperty({ enum: PLAN_NAMES }) requestedPlan!: string;
  @ApiProperty({ example: 'About 200,000 requests a day' }) expectedVolume!: string;
  @ApiProperty() message!: string;
  @ApiProperty({ enum: PLAN_REQUEST_STATUSES }) status!: PlanRequestStatus;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) decidedAt!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The name of the admin token that decided (`root` for ADMIN_TOKEN).',
  })
  decidedBy!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "The reviewer's note (why it was declined), shown to the requester.",
  })
  note!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'account:3f2c9a4e-1b2c-4d5e-8f90-123456789abc dev@example.com',
    description:
      'Who asked: the person the web app named when it asked for them (the portal: `account:<id> <email>`), else the name of the admin token that asked; null for requests made before it was kept.',
  })
  requestedBy!: string | null;
}

export class PlanRequestPageResponse {
  @ApiProperty({ type: [PlanRequestResponse] }) items!: PlanRequestResponse[];
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Pass as `after` for the next page; null on the last page.',
  })
  next!: string | null;
}

export function toPlanRequestResponse(r: PlanRequestEntity): PlanRequestResponse {
  return {
    id: r.id,
    consumer: r.consumer,
    currentPlan: r.currentPlan,
    requestedPlan: r.requestedPlan,
    expectedVolume: r.expectedVolume,
    message: r.message,
    status: r.status,
    createdAt: r.createdAt.toISOString(),
    decidedAt: r.decidedAt?.toISOString() ?? null,
    decidedBy: r.decidedBy,
    note: r.note,
    requestedBy: r.requestedBy,
  };
}
