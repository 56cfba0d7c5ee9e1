import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { deleteInBatches } from '../database/delete-in-batches';
import {
  ADDITIVE_COLUMNS,
  COUNTER_COLUMNS,
  LATENCY_COLUMNS,
  MINUTE_VALUE_COLUMNS,
  UsageCounts,
  addCounts,
  emptyCounts,
} from './usage-counts';
import type { Granularity } from './usage-range';
import { FLEET, SPECIAL_ROWS, UsageBucket, UsageMinuteRow } from './usage-recorder';

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

/** An export's connection, as pg_stat_activity names it. */
export const EXPORT_APPLICATION_NAME = 'gateway-usage-export';
const EXPORT_CONNECT_TIMEOUT_MS = 5_000;
/** The declaring transaction sends its statements back to back: idle in it means the gateway is stuck. */
const EXPORT_IDLE_IN_TRANSACTION_MS = 5_000;

/** The retention job's advisory lock: one instance at a time prunes (the gateway's migration lock is 7_340_021_011). */
const USAGE_RETENTION_LOCK = 7_340_021_023;

const SUMS = ADDITIVE_COLUMNS.map((c) => `sum("${c}") AS "${c}"`).join(', ');
const TOP_ORDER: Record<TopBy, string> = {
  requests: 'requests',
  rateLimited: 'rate_limited',
  serverErrors: 'server_errors',
};

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
    if (total === undefined)
      fleet.set(bucket.hour, (total = { hour: bucket.hour, consumer: FLEET, keyId: '', ...emptyCounts() }));
    addCounts(total, bucket);
  }
  return [...buckets, ...fleet.values()].sort(
    (x, y) => x.hour - y.hour || compare(x.consumer, y.consumer) || compare(x.keyId, y.keyId),
  );
}

function compare(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The columns of a bucket, in ADDITIVE_COLUMNS order. */
function valuesOf(bucket: UsageCounts): number[] {
  return [
    bucket.requests,
    bucket.ok,
    bucket.clientErrors,
    bucket.rateLimited,
    bucket.serverErrors,
    bucket.latencySumMs,
    ...bucket.latency,
  ];
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

  /** Where the pool connects: an export's own connection goes there too. */
  private get url(): string {
    return (this.dataSource.options as { url: string }).url;
  }

  private table(name: 'usage_hourly' | 'usage_daily' | 'usage_minutely'): string {
    return `"${this.schema}"."${name}"`;
  }

  /** A granularity's table, its time column, the condition keeping [$1, $2) (instants), and a bucket's start as an instant. */
  private bucketsOf(granularity: Granularity): { table: string; time: string; within: string; start: string } {
    if (granularity === 'hour')
      return {
        table: this.table('usage_hourly'),
        time: '"hour"',
        within: '"hour" >= $1::timestamptz AND "hour" < $2::timestamptz',
        start: '"hour"',
      };
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
  async write(batch: UsageBucket[], minutes: readonly UsageMinuteRow[] = []): Promise<void> {
    if (batch.length === 0) return;
    const buckets = withFleetRows(batch);
    const columns = ADDITIVE_COLUMNS.map((c) => `"${c}"`).join(', ');
    const arrays: unknown[][] = [
      buckets.map((b) => new Date(b.hour).toISOString()),
      buckets.map((b) => b.consumer),
      buckets.map((b) => b.keyId),
    ];
    const values = buckets.map(valuesOf);
    ADDITIVE_COLUMNS.forEach((_, i) => arrays.push(values.map((v) => v[i])));
    const types = [
      'timestamptz',
      'text',
      'text',
      ...ADDITIVE_COLUMNS.map((c) => (c === 'latency_sum_ms' ? 'float8' : 'int8')),
    ];
    const unnest = `unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) AS b("hour", "consumer", "key_id", ${columns})`;
    const update = (table: string) =>
      ADDITIVE_COLUMNS.map((c) => `"${c}" = ${table}."${c}" + EXCLUDED."${c}"`).join(', ');
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
      if (minutes.length > 0) await this.writeMinutes(manager, minutes);
    });
  }

  /**
   * The batch's minute rows (minuteRowsOf: one per minute, consumer and operation, in that order), added to
   * usage_minutely in the flush's transaction: a batch counts in the three tables or in none.
   */
  private async writeMinutes(manager: EntityManager, minutes: readonly UsageMinuteRow[]): Promise<void> {
    const columns = MINUTE_VALUE_COLUMNS.map((c) => `"${c}"`).join(', ');
    const arrays: unknown[][] = [
      minutes.map((row) => new Date(row.minute).toISOString()),
      minutes.map((row) => row.consumer),
      minutes.map((row) => row.operation),
      ...MINUTE_VALUE_COLUMNS.map((_, i) => minutes.map((row) => row.cell[i])),
    ];
    const types = ['timestamptz', 'text', 'text', ...MINUTE_VALUE_COLUMNS.map(() => 'int8')];
    const unnest = `unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) AS b("minute", "consumer", "operation", ${columns})`;
    const update = MINUTE_VALUE_COLUMNS.map((c) => `"${c}" = t."${c}" + EXCLUDED."${c}"`).join(', ');
    await manager.query(
      `INSERT INTO ${this.table('usage_minutely')} AS t ("minute", "consumer", "operation", ${columns}) SELECT * FROM ${unnest} ` +
        `ON CONFLICT ("minute", "consumer", "operation") DO UPDATE SET ${update}`,
      arrays,
    );
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
   * lines sum to them), a page of `pageSize` at a time: `write` is awaited before the next page is fetched
   * (back-pressure).
   *
   * On a connection of its own, never one of the pool: the pool serves the data plane's key lookups, and an
   * export lasts as long as its client takes to read it. The rows come from a holdable cursor (`WITH HOLD`),
   * filled by the transaction that declares it, which ends at once: the client's pace never holds a
   * transaction, a snapshot or a lock (on the embedded engine, one session for every connection, an open
   * transaction would stop every other query), only this connection, which the caller's deadlines bound. The
   * query runs under `statement_timeout` = `timeoutMs` and, on PostgreSQL, `idle_in_transaction_session_timeout`
   * (PGlite ignores the first and hangs on the second: it is never set there). The cursor is closed and the
   * connection ended however the export ends.
   */
  async exportRows(
    granularity: Granularity,
    from: Date,
    to: Date,
    timeoutMs: number,
    write: (rows: ExportRow[]) => Promise<void>,
    pageSize = 1000,
  ): Promise<void> {
    const { table, time, within, start } = this.bucketsOf(granularity);
    // An hour's keys are summed; a day has one row per consumer already.
    const [counters, groupBy] =
      granularity === 'hour'
        ? [COUNTER_COLUMNS.map((c) => `sum("${c}")::text AS "${c}"`).join(', '), ` GROUP BY "consumer", ${time}`]
        : [COUNTER_COLUMNS.map((c) => `"${c}"::text AS "${c}"`).join(', '), ''];
    const sql = `SELECT "consumer", ${start} AS "start", ${counters} FROM ${table} WHERE ${within} AND "consumer" <> $3${groupBy} ORDER BY "consumer", ${time}`;
    // Unique: on the embedded engine every connection is the same session, and so shares its cursors' names.
    const cursor = `usage_export_${randomBytes(8).toString('hex')}`;
    const client = new Client({
      connectionString: this.url,
      application_name: EXPORT_APPLICATION_NAME,
      connectionTimeoutMillis: EXPORT_CONNECT_TIMEOUT_MS,
      // The driver's own bound on every statement, should the server never answer.
      query_timeout: timeoutMs + EXPORT_CONNECT_TIMEOUT_MS,
    });
    // A connection lost between two statements: the next one fails (and ends the export).
    client.on('error', () => undefined);
    let declared = false;
    try {
      await client.connect();
      const [{ embedded }] = (
        await client.query<{ embedded: boolean }>(`SELECT strpos(version(), 'PGlite') > 0 AS "embedded"`)
      ).rows;
      await client.query('BEGIN');
      try {
        await client.query(`SET LOCAL statement_timeout = ${Math.floor(timeoutMs)}`);
        if (!embedded)
          await client.query(`SET LOCAL idle_in_transaction_session_timeout = ${EXPORT_IDLE_IN_TRANSACTION_MS}`);
        await client.query(`DECLARE ${cursor} NO SCROLL CURSOR WITH HOLD FOR ${sql}`, [
          from.toISOString(),
          to.toISOString(),
          FLEET,
        ]);
        // The cursor's rows are computed and kept here, under the statement timeout.
        await client.query('COMMIT');
        declared = true;
      } finally {
        if (!declared) await client.query('ROLLBACK').catch(() => undefined);
      }
      for (;;) {
        const { rows } = await client.query<ExportRow>(`FETCH ${pageSize} FROM ${cursor}`);
        if (rows.length > 0) await write(rows.map((row) => ({ ...row, start: new Date(row.start) })));
        if (rows.length < pageSize) break;
      }
    } finally {
      // On PostgreSQL the cursor would go with the session; on the embedded engine it would outlive it.
      if (declared) await client.query(`CLOSE ${cursor}`).catch(() => undefined);
      await client.end().catch(() => undefined);
    }
  }

  /**
   * Deletes hourly and daily rows older than `retentionDays`, RETENTION_BATCH rows per statement with a pause
   * between statements, while holding the retention advisory lock (another instance already pruning: nothing
   * to do). Returns the rows deleted, or null when another instance holds the lock.
   */
  async prune(retentionDays: number, minuteRetentionDays = retentionDays, pauseMs = 50): Promise<number | null> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }]: Array<{ locked: boolean }> = await runner.query(
        'SELECT pg_try_advisory_lock($1) AS "locked"',
        [USAGE_RETENTION_LOCK],
      );
      if (!locked) return null;
      try {
        const cutoff = `(now() - $1 * interval '1 day')`;
        const hourly = await deleteInBatches(
          runner,
          this.table('usage_hourly'),
          `"hour" < ${cutoff}`,
          [retentionDays],
          pauseMs,
        );
        const daily = await deleteInBatches(
          runner,
          this.table('usage_daily'),
          `"day" < (${cutoff} AT TIME ZONE 'UTC')::date`,
          [retentionDays],
          pauseMs,
        );
        const minutely = await deleteInBatches(
          runner,
          this.table('usage_minutely'),
          `"minute" < (now() - $1 * interval '1 day')`,
          [minuteRetentionDays],
          pauseMs,
        );
        return hourly + daily + minutely;
      } finally {
        await runner.query('SELECT pg_advisory_unlock($1)', [USAGE_RETENTION_LOCK]);
      }
    } finally {
      await runner.release();
    }
  }
}
