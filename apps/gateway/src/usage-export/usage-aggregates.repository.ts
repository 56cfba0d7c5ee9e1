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

/** Where the next page of minutes starts: after this (minute, consumer, operation), usage_minutely's key order. */
export interface MinuteCursor {
  minute: number;
  consumer: string;
  operation: string;
}

export interface MinuteAggregatesPage {
  aggregates: UsageAggregate[];
  /** The last row read (undefined: none), where the next page starts. */
  last?: MinuteCursor;
  /** Fewer rows than asked: nothing more before `until` now. */
  done: boolean;
}

/** usage_minutely's count and credits columns of each outcome (a MinuteCell's order: usage-counts.ts). */
const MINUTE_OUTCOMES: ReadonlyArray<[UsageOutcome, string, string]> = OUTCOME_COLUMNS.map(([outcome, column]) => [
  outcome,
  column,
  `${column}_credits`,
]);

/**
 * The usage history read as aggregates to export: read-only, from usage_hourly (the history's finest grain),
 * each (hour, consumer)'s keys summed, one aggregate per outcome with answers. The anonymous, overflow and fleet
 * rows are left out: no customer is billed for them (docs/usage-export.md). Keyset-paged on (hour, consumer),
 * which the primary key (hour, consumer, key_id) serves in order.
 */
@Injectable()
export class UsageAggregatesRepository {
  private readonly table: string;
  private readonly minutely: string;

  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.table = `"${config.consumers.schema}"."usage_hourly"`;
    this.minutely = `"${config.consumers.schema}"."usage_minutely"`;
  }

  /**
   * The aggregates of usage_minutely's rows after `after` (in key order: minute, consumer, operation) whose minute
   * starts before `until`, at most `rows` rows: one aggregate per outcome with answers, with the credits those
   * answers spent. The exporter's source; `until` is its to bound (exportableUntil).
   */
  async minutePage(
    after: MinuteCursor | undefined,
    until: number,
    rows = MAX_AGGREGATES_PAGE_ROWS,
  ): Promise<MinuteAggregatesPage> {
    const limit = Math.max(1, Math.min(rows, MAX_AGGREGATES_PAGE_ROWS));
    const columns = MINUTE_OUTCOMES.flatMap(([, count, credits]) => [`"${count}"::text`, `"${credits}"::text`]).join(
      ', ',
    );
    const found: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT "minute", "consumer", "operation", ${columns} FROM ${this.minutely} ` +
        `WHERE ("minute", "consumer", "operation") > ($1::timestamptz, $2::text, $3::text) AND "minute" < $4::timestamptz ` +
        `ORDER BY "minute", "consumer", "operation" LIMIT $5`,
      [
        new Date(after?.minute ?? 0).toISOString(),
        after?.consumer ?? '',
        after?.operation ?? '',
        new Date(until).toISOString(),
        limit,
      ],
    );
    const aggregates: UsageAggregate[] = [];
    for (const row of found) {
      const start = new Date(row.minute as string | Date).getTime();
      for (const [outcome, count, credits] of MINUTE_OUTCOMES) {
        const answers = Number(row[count]);
        if (answers > 0)
          aggregates.push({
            consumer: row.consumer as string,
            operation: row.operation as string,
            outcome,
            bucket: 'minute',
            start,
            count: answers,
            credits: Number(row[credits]),
          });
      }
    }
    const last = found[found.length - 1];
    return {
      aggregates,
      last: last && {
        minute: new Date(last.minute as string | Date).getTime(),
        consumer: last.consumer as string,
        operation: last.operation as string,
      },
      done: found.length < limit,
    };
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
