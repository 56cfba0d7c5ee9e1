import { IsIntegerInRange, ParseDecimalInteger } from '@app/contract';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import type { ThresholdEventType, ThresholdPolicyName } from '../../../alerts/threshold-event-table';
import { PAGE_SIZE } from '../../../admin-conventions/page-size';
import { WEBHOOK_EVENT_TYPES } from '../../webhook-events';
import { EXAMPLE_LOW_BALANCE, EXAMPLE_THRESHOLD, ThresholdEventPayload } from '../webhook-openapi';

export const THRESHOLD_POLICIES: readonly ThresholdPolicyName[] = ['day', 'month', 'credits'];
export const POLICY_RULE = `policy must be one of ${THRESHOLD_POLICIES.join(', ')}`;
export const TYPE_RULE = `type must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`;

export class ListThresholdEventsQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: PAGE_SIZE.min, maximum: PAGE_SIZE.max, default: PAGE_SIZE.default })
  @IsOptional()
  @ParseDecimalInteger()
  @IsIntegerInRange(PAGE_SIZE.min, PAGE_SIZE.max)
  limit?: number;

  @ApiPropertyOptional({ format: 'uuid', description: 'The `next` of the previous page (with the same filters).' })
  @IsOptional()
  @IsUUID('all', { message: 'after must be the next of a previous page' })
  after?: string;

  @ApiPropertyOptional({ enum: THRESHOLD_POLICIES, description: 'Only the events of this policy.' })
  @IsOptional()
  @IsIn(THRESHOLD_POLICIES, { message: POLICY_RULE })
  policy?: ThresholdPolicyName;

  @ApiPropertyOptional({ enum: WEBHOOK_EVENT_TYPES, description: 'Only the events of this type.' })
  @IsOptional()
  @IsIn(WEBHOOK_EVENT_TYPES, { message: TYPE_RULE })
  type?: ThresholdEventType;
}

/** A page of a consumer's threshold events: each exactly the body its webhooks were sent (ThresholdEventPayload). */
export class ThresholdEventPageResponse {
  @ApiProperty({ type: [ThresholdEventPayload], example: [EXAMPLE_LOW_BALANCE, EXAMPLE_THRESHOLD] })
  items!: ThresholdEventPayload[];
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uuid',
    description: 'Pass as `after` for the next page; null on the last page.',
  })
  next!: string | null;
}
