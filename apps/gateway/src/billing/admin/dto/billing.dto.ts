import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsISO8601, IsOptional, Max, Min } from 'class-validator';
import type { BillingState } from '../../billing.service';

/** The largest monthly quota the column (a PostgreSQL integer) holds. */
export const PER_MONTH_MAX = 2_000_000_000;

export class UpdateBillingDto {
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-01-31T00:00:00Z',
    description:
      "Where the consumer's billing months are cut (its day of month and time of day, UTC). null: back to its creation time. Moving it keeps the count of the period in progress (docs/billing.md).",
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'billingAnchor must be an ISO 8601 date-time' })
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
}

export function toBillingResponse(state: BillingState): BillingResponse {
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
  };
}
