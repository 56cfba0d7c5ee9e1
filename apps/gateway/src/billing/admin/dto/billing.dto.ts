import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsInt,
  IsObject,
  IsOptional,
  Max,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { CREDIT_AMOUNT_MAX, DATE_TIME_SYNTAX, IsDateTime, OPERATION_COST_MAX } from '@app/contract';
import { AlertSettings, CONSUMER_THRESHOLDS_MAX } from '../../../plans/alert-thresholds';
import type { BillingState } from '../../billing.service';
import type { CreditsView } from '../credits-admin.service';
import { COSTS_EXAMPLE, CreditRefillBody, CreditsResponse, toCreditsResponse } from './credits.dto';

/** The largest monthly quota the column (a PostgreSQL integer) holds. */
export const PER_MONTH_MAX = 2_000_000_000;

/** Each value above the one before it (sorted, no repeats). */
const IsAscending = () =>
  ValidateBy({
    name: 'isAscending',
    validator: {
      validate: (value: unknown) =>
        Array.isArray(value) && value.every((item, i) => i === 0 || (item as number) > (value[i - 1] as number)),
      defaultMessage: () => '$property must be in ascending order without repeats',
    },
  });

/** A consumer's own alert thresholds (docs/alerts.md): either side in place of its plan's. */
export class AlertThresholdsBody {
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'integer', minimum: 1, maximum: 100 },
    minItems: 1,
    maxItems: CONSUMER_THRESHOLDS_MAX,
    example: [50, 90, 100],
    description: `Whole percents of the day window and the monthly quota that raise a \`quota.threshold_crossed\` event, ascending, at most ${CONSUMER_THRESHOLDS_MAX}. Absent: its plan's.`,
  })
  // With stopAtFirstError, the rule nearest the property is checked first: its shape, then its items, then their order.
  @IsAscending()
  @Max(100, { each: true, message: 'thresholdsPercent must hold percents from 1 to 100' })
  @Min(1, { each: true, message: 'thresholdsPercent must hold percents from 1 to 100' })
  @IsInt({ each: true, message: 'thresholdsPercent must hold whole percents' })
  @ArrayMaxSize(CONSUMER_THRESHOLDS_MAX, {
    message: `thresholdsPercent takes at most ${CONSUMER_THRESHOLDS_MAX} thresholds`,
  })
  @ArrayMinSize(1, { message: 'thresholdsPercent must not be empty' })
  @IsArray({ message: 'thresholdsPercent must be a list of whole percents' })
  @IsOptional()
  thresholdsPercent?: number[];

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: CREDIT_AMOUNT_MAX,
    example: 500,
    description:
      "The credit balance called low (a `credits.low_balance` event when the balance falls to it; 0: only `credits.exhausted`). Absent: its plan's.",
  })
  @Max(CREDIT_AMOUNT_MAX, { message: `creditsLowBalance must be at most ${CREDIT_AMOUNT_MAX}` })
  @Min(0, { message: 'creditsLowBalance must be at least 0' })
  @IsInt({ message: 'creditsLowBalance must be an integer' })
  @IsOptional()
  creditsLowBalance?: number;
}

export class UpdateBillingDto {
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-01-31T00:00:00Z',
    description:
      "Where the consumer's billing months are cut (its day of month and time of day, UTC). null: back to its creation time. Moving it keeps the count of the period in progress (docs/billing.md). " +
      DATE_TIME_SYNTAX['date-time'],
  })
  @IsOptional()
  @IsDateTime()
  billingAnchor?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: PER_MONTH_MAX,
    nullable: true,
    example: 5_000_000,
    description: "The consumer's own monthly quota (agreed individually). null: back to its plan's, if any.",
  })
  @IsOptional()
  @IsInt({ message: 'perMonth must be an integer' })
  @Min(1, { message: 'perMonth must be at least 1' })
  @Max(PER_MONTH_MAX, { message: `perMonth must be at most ${PER_MONTH_MAX}` })
  perMonth?: number | null;

  @ApiPropertyOptional({
    type: CreditRefillBody,
    nullable: true,
    description: "The consumer's own credit refill (docs/billing.md). null: back to its plan's, if any.",
  })
  @IsOptional()
  @IsObject({ message: 'creditRefill must be {"amount": n, "every": "day" | "month"} or null' })
  creditRefill?: { amount: number; every: 'day' | 'month' } | null;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'integer', minimum: 0, maximum: OPERATION_COST_MAX },
    nullable: true,
    example: COSTS_EXAMPLE,
    description:
      "The consumer's own cost per public operation (0 to 1,000,000; unlisted: its plan's, else 1). null: back to its plan's.",
  })
  @IsOptional()
  @IsObject({ message: 'costs must be an object of operationId: cost, or null' })
  costs?: Record<string, number> | null;

  @ApiPropertyOptional({
    type: AlertThresholdsBody,
    nullable: true,
    description:
      "The consumer's own alert thresholds (docs/alerts.md), replacing any it had: a side left out is its plan's. null (or {}): back to its plan's.",
  })
  @IsOptional()
  @IsObject({ message: 'alerts must be {"thresholdsPercent": [...], "creditsLowBalance": n} or null' })
  @ValidateNested()
  @Type(() => AlertThresholdsBody)
  alerts?: AlertThresholdsBody | null;
}

export class BillingPeriodResponse {
  @ApiProperty({ format: 'date-time' }) start!: string;
  @ApiProperty({ format: 'date-time', description: 'The next reset of the monthly quota.' }) end!: string;
}

export class BillingResponse {
  @ApiProperty({ example: 'acme' }) consumer!: string;
  @ApiProperty({ format: 'date-time', description: 'Its own anchor, else its creation time.' }) billingAnchor!: string;
  @ApiProperty({ description: 'false: the anchor is its creation time (the default).' }) anchorSet!: boolean;
  @ApiProperty({ type: 'integer', nullable: true, description: "Its own monthly quota (null: its plan's, if any)." })
  ownPerMonth!: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'The monthly quota it is held to; null: none.' })
  perMonth!: number | null;
  @ApiProperty({ type: BillingPeriodResponse }) currentPeriod!: BillingPeriodResponse;
  @ApiProperty({
    type: CreditsResponse,
    nullable: true,
    description: 'Prepaid credits; null: not in force for this consumer (docs/billing.md).',
  })
  credits!: CreditsResponse | null;
  @ApiProperty({
    type: AlertThresholdsBody,
    nullable: true,
    description: "Its own alert thresholds (a side absent: its plan's); null: its plan's (docs/alerts.md).",
  })
  alerts!: AlertSettings | null;
}

export function toBillingResponse(state: BillingState, credits: CreditsView | null): BillingResponse {
  return {
    consumer: state.consumer,
    billingAnchor: state.billingAnchor.toISOString(),
    anchorSet: state.anchorSet,
    ownPerMonth: state.ownPerMonth,
    perMonth: state.perMonth,
    currentPeriod: {
      start: new Date(state.currentPeriod.startMs).toISOString(),
      end: new Date(state.currentPeriod.endMs).toISOString(),
    },
    credits: toCreditsResponse(credits),
    alerts: state.alerts,
  };
}
