import { DATE_TIME_SYNTAX, IsDateTime, IsIntegerInRange, ParseDecimalInteger } from '@app/contract';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { latencyQuantile, UsageCounts } from '../../usage-counts';
import { GRANULARITIES, USAGE_RANGE } from '../../usage-range';
import type { Granularity } from '../../usage-range';
import type { TopBy } from '../../usage.repository';

export const TOP_BY: readonly TopBy[] = ['requests', 'rateLimited', 'serverErrors'];
/** Not "from 1 to 100": that is the public API's page rule, and this one is not it. */
export const TOP_LIMIT = { min: 1, max: 100, default: 10, message: 'limit must be an integer between 1 and 100' };

const RANGE_RULES =
  `\`from\` inclusive, \`to\` exclusive, both at the start of a bucket (an hour, or a UTC day). At most ${USAGE_RANGE.hour.maxText} ` +
  `or ${USAGE_RANGE.day.maxText} per call. Omitted: \`to\` is the end of the current bucket, \`from\` ${USAGE_RANGE.hour.defaultText} ` +
  `(hours) or ${USAGE_RANGE.day.defaultText} (days) before \`to\`.`;

class UsageRangeQueryDto {
  @ApiPropertyOptional({
    format: 'date-time',
    description: `Start of the range (inclusive). ${RANGE_RULES} ${DATE_TIME_SYNTAX['date-time-or-date']}`,
    example: '2026-11-01T00:00:00Z',
  })
  @IsOptional()
  @IsDateTime('date-time-or-date')
  from?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: `End of the range (exclusive). ${DATE_TIME_SYNTAX['date-time-or-date']}`,
    example: '2026-12-01T00:00:00Z',
  })
  @IsOptional()
  @IsDateTime('date-time-or-date')
  to?: string;
}

export class UsageHistoryQueryDto extends UsageRangeQueryDto {
  @ApiPropertyOptional({ enum: GRANULARITIES, default: 'hour', description: 'UTC hours or UTC days.' })
  @IsOptional()
  @IsIn(GRANULARITIES, { message: `granularity must be one of ${GRANULARITIES.join(', ')}` })
  granularity?: Granularity;
}

export class UsageTopQueryDto extends UsageRangeQueryDto {
  @ApiPropertyOptional({ enum: TOP_BY, default: 'requests', description: 'What the consumers are ranked by.' })
  @IsOptional()
  @IsIn(TOP_BY, { message: `by must be one of ${TOP_BY.join(', ')}` })
  by?: TopBy;

  @ApiPropertyOptional({ type: 'integer', minimum: TOP_LIMIT.min, maximum: TOP_LIMIT.max, default: TOP_LIMIT.default })
  @IsOptional()
  @ParseDecimalInteger()
  @IsIntegerInRange(TOP_LIMIT.min, TOP_LIMIT.max, { message: TOP_LIMIT.message })
  limit?: number;
}

export class UsageExportQueryDto extends UsageRangeQueryDto {
  @ApiPropertyOptional({
    enum: GRANULARITIES,
    default: 'day',
    description: 'One CSV line per consumer and UTC day (or hour).',
  })
  @IsOptional()
  @IsIn(GRANULARITIES, { message: `granularity must be one of ${GRANULARITIES.join(', ')}` })
  granularity?: Granularity;
}

/** The counts of a bucket (or of a ranked consumer), with the latency percentiles read from its histogram. */
class UsageCountsResponse {
  @ApiProperty({ type: 'integer', description: 'Every answer.' }) requests!: number;
  @ApiProperty({ type: 'integer', description: '2xx and 3xx answers.' }) ok!: number;
  @ApiProperty({ type: 'integer', description: '4xx answers other than 429.' }) clientErrors!: number;
  @ApiProperty({ type: 'integer', description: '429 answers (rate limits and bans).' }) rateLimited!: number;
  @ApiProperty({ type: 'integer', description: '5xx answers.' }) serverErrors!: number;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Median latency (ms), interpolated inside its histogram bucket; null without answers.',
  })
  p50Ms!: number | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: '95th percentile latency (ms), interpolated inside its histogram bucket.',
  })
  p95Ms!: number | null;
}

export class UsageBucketResponse extends UsageCountsResponse {
  @ApiProperty({
    format: 'date-time',
    example: '2026-11-01T00:00:00.000Z',
    description: 'Start of the UTC hour or day.',
  })
  start!: string;
}

export class UsageHistoryResponse {
  @ApiProperty({
    example: 'acme',
    description: 'The consumer, or `*` for the whole fleet (anonymous answers included).',
  })
  consumer!: string;
  @ApiProperty({ enum: GRANULARITIES }) granularity!: Granularity;
  @ApiProperty({
    type: [UsageBucketResponse],
    description: 'Every bucket of the range in time order, empty ones included.',
  })
  buckets!: UsageBucketResponse[];
}

export class RankedConsumerResponse extends UsageCountsResponse {
  @ApiProperty({ example: 'acme' }) consumer!: string;
}

export class UsageTopResponse {
  @ApiProperty({ format: 'date-time' }) from!: string;
  @ApiProperty({ format: 'date-time' }) to!: string;
  @ApiProperty({ enum: TOP_BY }) by!: TopBy;
  @ApiProperty({
    type: [RankedConsumerResponse],
    description: 'Consumers with at least one such answer, most first (the anonymous row left out).',
  })
  consumers!: RankedConsumerResponse[];
}

export function toCountsResponse(counts: UsageCounts): UsageCountsResponse {
  return {
    requests: counts.requests,
    ok: counts.ok,
    clientErrors: counts.clientErrors,
    rateLimited: counts.rateLimited,
    serverErrors: counts.serverErrors,
    p50Ms: latencyQuantile(counts.latency, 0.5),
    p95Ms: latencyQuantile(counts.latency, 0.95),
  };
}
