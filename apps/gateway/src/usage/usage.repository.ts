import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { deleteInBatches } from '../database/delete-in-batches';
import { ADDITIVE_COLUMNS, COUNTER_COLUMNS, LATENCY_COLUMNS, UsageCounts, addCounts, emptyCounts } from './usage-counts';
import type { Granularity } from './usage-range';
import { FLEET, SPECIAL_ROWS, UsageBucket } from './usage-recorder';

export type TopBy = 'requests' | 'rateLimited' | 'serverErrors';

/** One bucket of history as read back: its start, and the counts summed over the keys (and consumers) asked for. */
export interface UsagePoint extends UsageCounts {
  start: number;
}

export interface RankedConsumer extends UsageCounts {
  consumer: string;
}

/** One row of the CSV export. */
export interface ExportRow {
  consumer: string;
  start: Date;
  requests: string;
  ok: string;
  client_errors: string;
  server_errors: string;
  rate_limited: string;
}

/** The retention job's advisory lock: one instance at a time prunes (the gateway's migration lock is 7_340_021_011). */
const USAGE_RETENTION_LOCK = 7_340_021_023;

const SUMS = ADDITIVE_COLUMNS.map((c) => `sum("${c}") AS "${c}"`).join(', ');
const TOP_ORDER: Record<TopBy, string> = { requests: 'requests', rateLimited: 'rate_limited', serverErrors: 'server_errors' };

function countsOf(row: Record<string, unknown>): UsageCounts {
  return {
    requests: Number(row.requests ?? 0),
    ok: Number(row.ok ?? 0),
    clientErrors: Number(row.client_errors ?? 0),
    rateLimited: Number(row.rate_limited ?? 0),
    serverErrors: Number(row.server_errors ?? 0),
    latencySumMs: Number(row.latency_sum_ms ?? 0),
    latency: LATENCY_COLUMNS.map((c) => Number(row[c] ?? 0)),
  };
}

/**
 * The batch with the fleet's row of each of its hours (FLEET: the sum of every row of that hour), sorted by
 * (hour, consumer, key): every instance upserts (and so locks) the rows in the same order, never deadlocking another.
 */
function withFleetRows(buckets: UsageBucket[]): UsageBucket[] {
  const fleet = new Map<number, UsageBucket>();
  for (const bucket of buckets) {
    let total = fleet.get(bucket.hour);
    if (total === undefined) fleet.set(bucket.hour, (total = { hour: bucket.hour, consumer: FLEET, keyId: '', ...emptyCounts() }));
    addCounts(total, bucket);
  }
  return [...buckets, ...fleet.values()].sort((x, y) => x.hour - y.hour || compare(x.consumer, y.consumer) || compare(x.keyId, y.keyId));
}

function compare(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The columns of a bucket, in ADDITIVE_COLUMNS order. */
function valuesOf(bucket: UsageCounts): number[] {
  return [bucket.requests, bucket.ok, bucket.clientErrors, bucket.rateLimited, bucket.serverErrors, bucket.latencySumMs, ...bucket.latency];
}

/**
 * usage_hourly and usage_daily: the additive upsert of a flushed batch (both tables, one transaction, so a retried
 * batch is never counted twice), the history and ranking queries, the export cursor and the retention job.
 * The same SQL runs on PostgreSQL and on the embedded PGlite.
 */
@Injectable()
export class UsageRepository {
  private readonly schema: string;

  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.schema = config.consumers.schema;
  }

  private table(name: 'usage_hourly' | 'usage_daily'): string {
    return `"${this.schema}"."${name}"`;
  }

  /** A granularity's table, its time column, the condition keeping [$1, $2) (instants), and a bucket's start as an instant. */
  private bucketsOf(granularity: Granularity): { table: string; time: string; within: string; start: string } {
    if (granularity === 'hour') return { table: this.table('usage_hourly'), time: '"hour"', within: '"hour" >= $1::timestamptz AND "hour" < $2::timestamptz', start: '"hour"' };
    return {
      table: this.table('usage_daily'),
      time: '"day"',
      within: `"day" >= ($1::timestamptz AT TIME ZONE 'UTC')::date AND "day" < ($2::timestamptz AT TIME ZONE 'UTC')::date`,
      start: `("day"::timestamp AT TIME ZONE 'UTC')`,
    };
  }

  /**
   * Adds a batch to the tables: one INSERT ... ON CONFLICT DO UPDATE SET col = col + EXCLUDED.col per table, the
   * rows passed as arrays (unnest), so any number of buckets is two statements; the day rows are the batch's
   * hours summed per UTC day and consumer in the same statement. Each hour's FLEET row (the sum of its rows) is
   * added in the same way: the fleet's history reads it, never every consumer's rows. Both statements go in key
   * order (see withFleetRows), the same on every instance.
   */
  async write(batch: UsageBucket[]): Promise<void> {
    if (batch.length === 0) return;
    const buckets = withFleetRows(batch);
    const columns = ADDITIVE_COLUMNS.map((c) => `"${c}"`).join(', ');
    const arrays: unknown[][] = [buckets.map((b) => new Date(b.hour).toISOString()), buckets.map((b) => b.consumer), buckets.map((b) => b.keyId)];
    const values = buckets.map(valuesOf);
    ADDITIVE_COLUMNS.forEach((_, i) => arrays.push(values.map((v) => v[i])));
    const types = ['timestamptz', 'text', 'text', ...ADDITIVE_COLUMNS.map((c) => (c === 'latency_sum_ms' ? 'float8' : 'int8'))];
    const unnest = `unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) AS b("hour", "consumer", "key_id", ${columns})`;
    const update = (table: string) => ADDITIVE_COLUMNS.map((c) => `"${c}" = ${table}."${c}" + EXCLUDED."${c}"`).join(', ');
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO ${this.table('usage_hourly')} AS t ("hour", "consumer", "key_id", ${columns}) SELECT * FROM ${unnest} ` +
          `ON CONFLICT ("hour", "consumer", "key_id") DO UPDATE SET ${update('t')}`,
        arrays,
      );
      await manager.query(
        `INSERT INTO ${this.table('usage_daily')} AS t ("day", "consumer", ${columns}) ` +
          `SELECT ("hour" AT TIME ZONE 'UTC')::date, "consumer", ${SUMS} FROM ${unnest} GROUP BY 1, 2 ORDER BY 1, 2 ` +
          `ON CONFLICT ("day", "consumer") DO UPDATE SET ${update('t')}`,
        arrays,
      );
    });
  }

  /**
   * The buckets of [from, to) that have answers, summed over keys: of `consumer`, or of everyone (the FLEET
   * rows: the anonymous and overflow rows included) when consumer is undefined. Empty buckets are the caller's.
   */
  async history(consumer: string | undefined, granularity: Granularity, from: Date, to: Date): Promise<UsagePoint[]> {
    const { table, time, within, start } = this.bucketsOf(granularity);
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT ${start} AS "start", ${SUMS} FROM ${table} WHERE ${within} AND "consumer" = $3 GROUP BY ${time} ORDER BY ${time}`,
      [from.toISOString(), to.toISOString(), consumer ?? FLEET],
    );
    return rows.map((row) => ({ start: new Date(row.start as string | Date).getTime(), ...countsOf(row) }));
  }

  /** Consumers ranked by `by` over [from, to) (the anonymous and overflow rows left out), at most `limit`. */
  async top(by: TopBy, limit: number, granularity: Granularity, from: Date, to: Date): Promise<RankedConsumer[]> {
    const { table, within } = this.bucketsOf(granularity);
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT "consumer", ${SUMS} FROM ${table} WHERE ${within} AND "consumer" <> ALL($3::text[]) ` +
        `GROUP BY "consumer" HAVING sum("${TOP_ORDER[by]}") > 0 ORDER BY sum("${TOP_ORDER[by]}") DESC, "consumer" LIMIT $4`,
      [from.toISOString(), to.toISOString(), SPECIAL_ROWS, limit],
    );
    return rows.map((row) => ({ consumer: row.consumer as string, ...countsOf(row) }));
  }

  /**
   * Streams the rows of [from, to) by consumer then time (keys summed for hours; the FLEET rows left out: the
   * lines sum to them) from a server-side cursor, a
   * page of `pageSize` at a time: `write` is awaited before the next page is fetched (back-pressure).
   */
  async exportRows(granularity: Granularity, from: Date, to: Date, write: (rows: ExportRow[]) => Promise<void>, pageSize = 1000): Promise<void> {
    const { table, time, within, start } = this.bucketsOf(granularity);
    // An hour's keys are summed; a day has one row per consumer already.
    const [counters, groupBy] =
      granularity === 'hour'
        ? [COUNTER_COLUMNS.map((c) => `sum("${c}")::text AS "${c}"`).join(', '), ` GROUP BY "consumer", ${time}`]
        : [COUNTER_COLUMNS.map((c) => `"${c}"::text AS "${c}"`).join(', '), ''];
    const sql = `SELECT "consumer", ${start} AS "start", ${counters} FROM ${table} WHERE ${within} AND "consumer" <> $3${groupBy} ORDER BY "consumer", ${time}`;
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction('REPEATABLE READ');
      await runner.query(`DECLARE usage_export NO SCROLL CURSOR FOR ${sql}`, [from.toISOString(), to.toISOString(), FLEET]);
      for (;;) {
        const rows: ExportRow[] = await runner.query(`FETCH ${pageSize} FROM usage_export`);
        if (rows.length > 0) await write(rows.map((row) => ({ ...row, start: new Date(row.start) })));
        if (rows.length < pageSize) break;
      }
      await runner.commitTransaction();
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    } finally {
      await runner.release();
    }
  }

  /**
   * Deletes hourly and daily rows older than `retentionDays`, RETENTION_BATCH rows per statement with a pause
   * between statements, while holding the retention advisory lock (another instance already pruning: nothing
   * to do). Returns the rows deleted, or null when another instance holds the lock.
   */
  async prune(retentionDays: number, pauseMs = 50): Promise<number | null> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }]: Array<{ locked: boolean }> = await runner.query('SELECT pg_try_advisory_lock($1) AS "locked"', [USAGE_RETENTION_LOCK]);
      if (!locked) return null;
      try {
        const cutoff = `(now() - $1 * interval '1 day')`;
        const hourly = await deleteInBatches(runner, this.table('usage_hourly'), `"hour" < ${cutoff}`, [retentionDays], pauseMs);
        const daily = await deleteInBatches(runner, this.table('usage_daily'), `"day" < (${cutoff} AT TIME ZONE 'UTC')::date`, [retentionDays], pauseMs);
        return hourly + daily;
      } finally {
        await runner.query('SELECT pg_advisory_unlock($1)', [USAGE_RETENTION_LOCK]);
      }
    } finally {
      await runner.release();
    }
  }
}
