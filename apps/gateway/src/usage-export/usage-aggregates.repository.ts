import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { SPECIAL_ROWS } from '../usage/usage-recorder';
import { ALL_OPERATIONS, BUCKET_MS, UsageAggregate, UsageOutcome } from './usage-aggregate';

/** Where the next page starts: after this (hour, consumer). */
export interface AggregatesCursor {
  start: number;
  consumer: string;
}

export interface AggregatesPage {
  aggregates: UsageAggregate[];
  /** Undefined on the last page of the range. */
  next?: AggregatesCursor;
}

/** The most (hour, consumer) rows one page reads: at most four aggregates each. */
export const MAX_AGGREGATES_PAGE_ROWS = 1000;

/** Each outcome's column of usage_hourly (usage-counts.ts: countAnswer decides which an answer goes in). */
const OUTCOME_COLUMNS: ReadonlyArray<[UsageOutcome, string]> = [
  ['ok', 'ok'],
  ['client_error', 'client_errors'],
  ['rate_limited', 'rate_limited'],
  ['server_error', 'server_errors'],
];

/**
 * The usage history read as aggregates to export: read-only, from usage_hourly (the history's finest grain),
 * each (hour, consumer)'s keys summed, one aggregate per outcome with answers. The anonymous, overflow and fleet
 * rows are left out: no customer is billed for them (docs/usage-export.md). Keyset-paged on (hour, consumer),
 * which the primary key (hour, consumer, key_id) serves in order.
 */
@Injectable()
export class UsageAggregatesRepository {
  private readonly table: string;

  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.table = `"${config.consumers.schema}"."usage_hourly"`;
  }

  /**
   * The aggregates of the hours in [from, to) after `after`, at most `rows` (hour, consumer) rows of them. `to`
   * is the caller's to bound by exportableUntil: this reads whatever the table holds.
   */
  async page(
    from: number,
    to: number,
    after?: AggregatesCursor,
    rows = MAX_AGGREGATES_PAGE_ROWS,
  ): Promise<AggregatesPage> {
    if (from % BUCKET_MS.hour !== 0 || to % BUCKET_MS.hour !== 0) throw new Error('from and to must be whole hours');
    const limit = Math.max(1, Math.min(rows, MAX_AGGREGATES_PAGE_ROWS));
    const sums = OUTCOME_COLUMNS.map(([, column]) => `sum("${column}")::text AS "${column}"`).join(', ');
    const found: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT "hour", "consumer", ${sums} FROM ${this.table} ` +
        `WHERE "hour" >= $1::timestamptz AND "hour" < $2::timestamptz AND "consumer" <> ALL($3::text[]) ` +
        `AND ("hour", "consumer") > ($4::timestamptz, $5::text) ` +
        `GROUP BY "hour", "consumer" ORDER BY "hour", "consumer" LIMIT $6`,
      [
        new Date(from).toISOString(),
        new Date(to).toISOString(),
        SPECIAL_ROWS,
        new Date(after?.start ?? from).toISOString(),
        after?.consumer ?? '',
        limit,
      ],
    );
    const aggregates: UsageAggregate[] = [];
    for (const row of found) {
      const start = new Date(row.hour as string | Date).getTime();
      for (const [outcome, column] of OUTCOME_COLUMNS) {
        const count = Number(row[column]);
        if (count > 0)
          aggregates.push({
            consumer: row.consumer as string,
            operation: ALL_OPERATIONS,
            outcome,
            bucket: 'hour',
            start,
            count,
            credits: null,
          });
      }
    }
    const last = found[found.length - 1];
    return {
      aggregates,
      next:
        found.length === limit
          ? { start: new Date(last.hour as string | Date).getTime(), consumer: last.consumer as string }
          : undefined,
    };
  }
}
