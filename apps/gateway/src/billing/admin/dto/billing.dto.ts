import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsObject, IsOptional, Max, Min, ValidateNested } from 'class-validator';
import { DATE_TIME_SYNTAX, IsDateTime, OPERATION_COST_MAX } from '@app/contract';
import { AlertSettings } from '../../../plans/alert-thresholds';
import { AlertThresholdsBody } from '../../../consumers/admin/dto/alert-thresholds.dto';
import type { BillingState } from '../../billing.service';
import type { CreditsView } from '../credits-admin.service';
import { COSTS_EXAMPLE, CreditRefillBody, CreditsResponse, toCreditsResponse } from './credits.dto';

/** The largest monthly quota the column (a PostgreSQL integer) holds. */
export const PER_MONTH_MAX = 2_000_000_000;

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
