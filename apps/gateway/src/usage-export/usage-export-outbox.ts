import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { deleteInBatches } from '../database/delete-in-batches';
import type { MinuteCursor } from './usage-aggregates.repository';
import type { UsageExportBatchRow } from './usage-export-entities';
import type { UsageExportRequest } from './usage-export.sink';

/** The one exporter's row in usage_export_cursor. */
export const EXPORTER_NAME = 'usage-events';

/** A request of the outbox to send: its body as built, and what Stripe's window needs. */
export interface OutboxBatch {
  id: string;
  contentType: string;
  body: string;
  ids: string[];
  /** The oldest bucket start among its aggregates (epoch ms). */
  oldestStart: number;
  attempts: number;
  /** When it was first handed to the ingest URL (epoch ms), recorded before that attempt; undefined: never. */
  firstAttemptAt?: number;
}

/** A request to put in the outbox, with the oldest bucket start of its aggregates. */
export interface NewBatch extends UsageExportRequest {
  oldestStart: number;
}

/** Thrown when this instance no longer holds the lease (another took it over): the caller stops. */
export class LeaseLost extends Error {
  constructor() {
    super('the usage export lease is held by another instance');
    this.name = 'LeaseLost';
  }
}

function batchOf(row: UsageExportBatchRow): OutboxBatch {
  return {
    id: String(row.id),
    contentType: row.content_type,
    body: row.body,
    ids: row.ids,
    oldestStart: new Date(row.oldest_start).getTime(),
    attempts: Number(row.attempts),
    firstAttemptAt: row.first_attempt_at ? new Date(row.first_attempt_at).getTime() : undefined,
  };
}

/**
 * The usage export's state in PostgreSQL (usage_export_cursor, usage_export_batches): the lease that lets one
 * instance of the fleet export at a time (on the database's clock: an instance that dies lets it expire), the
 * position in usage_minutely, and the outbox of built requests with their attempts. Every write that moves the
 * export on is conditional on the lease, so an instance that lost it changes nothing.
 */
@Injectable()
export class UsageExportOutbox {
  private readonly cursorTable: string;
  private readonly batchTable: string;

  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.cursorTable = `"${config.consumers.schema}"."usage_export_cursor"`;
    this.batchTable = `"${config.consumers.schema}"."usage_export_batches"`;
  }

  /** Takes or renews the lease for `leaseMs`; the position when held, undefined when another instance holds it. */
  async acquire(holder: string, leaseMs: number): Promise<{ after?: MinuteCursor } | undefined> {
    await this.dataSource.query(
      `INSERT INTO ${this.cursorTable} ("name") VALUES ($1) ON CONFLICT ("name") DO NOTHING`,
      [EXPORTER_NAME],
    );
    const [rows] = (await this.dataSource.query(
      `UPDATE ${this.cursorTable} SET "holder" = $2, "lease_until" = now() + $3 * interval '1 millisecond' ` +
        `WHERE "name" = $1 AND ("holder" IS NULL OR "holder" = $2 OR "lease_until" < now()) ` +
        `RETURNING "after_minute", "after_consumer", "after_operation"`,
      [EXPORTER_NAME, holder, leaseMs],
    )) as [Array<Record<string, unknown>>, number];
    if (rows.length === 0) return undefined;
    const row = rows[0];
    return {
      after:
        row.after_minute === null
          ? undefined
          : {
              minute: new Date(row.after_minute as string | Date).getTime(),
              consumer: row.after_consumer as string,
              operation: row.after_operation as string,
            },
    };
  }

  /** Gives the lease up (shutdown): the next instance need not wait for it to expire. */
  async release(holder: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE ${this.cursorTable} SET "holder" = NULL, "lease_until" = NULL WHERE "name" = $1 AND "holder" = $2`,
      [EXPORTER_NAME, holder],
    );
  }

  /**
   * Puts `batches` in the outbox and moves the position from `from` to `to`, in one transaction, only while
   * `holder` holds the lease and the position is still `from`: the aggregates of a row go in once, or not at all.
   */
  async fill(
    holder: string,
    from: MinuteCursor | undefined,
    to: MinuteCursor,
    batches: NewBatch[],
    now: number,
  ): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const [moved] = (await manager.query(
        `UPDATE ${this.cursorTable} SET "after_minute" = $3::timestamptz, "after_consumer" = $4, "after_operation" = $5 ` +
          `WHERE "name" = $1 AND "holder" = $2 AND "lease_until" > now() ` +
          `AND "after_minute" IS NOT DISTINCT FROM $6::timestamptz AND "after_consumer" IS NOT DISTINCT FROM $7 ` +
          `AND "after_operation" IS NOT DISTINCT FROM $8 RETURNING "name"`,
        [
          EXPORTER_NAME,
          holder,
          new Date(to.minute).toISOString(),
          to.consumer,
          to.operation,
          from ? new Date(from.minute).toISOString() : null,
          from?.consumer ?? null,
          from?.operation ?? null,
        ],
      )) as [unknown[], number];
      if (moved.length === 0) throw new LeaseLost();
      if (batches.length === 0) return;
      const at = new Date(now).toISOString();
      await manager.query(
        `INSERT INTO ${this.batchTable} ("content_type", "body", "ids", "oldest_start", "created_at", "next_attempt_at") ` +
          `SELECT b.content_type, b.body, b.ids::jsonb, b.oldest_start, $5::timestamptz, $5::timestamptz ` +
          `FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) WITH ORDINALITY AS b(content_type, body, ids, oldest_start, n) ORDER BY b.n`,
        [
          batches.map((batch) => batch.contentType),
          batches.map((batch) => batch.body),
          batches.map((batch) => JSON.stringify(batch.ids)),
          batches.map((batch) => new Date(batch.oldestStart).toISOString()),
          at,
        ],
      );
    });
  }

  /** The oldest pending batch due at `now` (the outbox's order: creation), if any. */
  async nextDue(now: number): Promise<OutboxBatch | undefined> {
    const rows: UsageExportBatchRow[] = await this.dataSource.query(
      `SELECT * FROM ${this.batchTable} WHERE "state" = 'pending' AND "next_attempt_at" <= $1::timestamptz ORDER BY "id" LIMIT 1`,
      [new Date(now).toISOString()],
    );
    return rows.length === 0 ? undefined : batchOf(rows[0]);
  }

  /**
   * Records an attempt before it is made (its first time kept: Stripe's window runs from it), renewing the lease:
   * `next_attempt_at` moves to `retryAt`, so an instance that dies during the attempt leaves it due then.
   */
  async beginAttempt(holder: string, leaseMs: number, id: string, now: number, retryAt: number): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const [held] = (await manager.query(
        `UPDATE ${this.cursorTable} SET "lease_until" = now() + $3 * interval '1 millisecond' ` +
          `WHERE "name" = $1 AND "holder" = $2 AND "lease_until" > now() RETURNING "name"`,
        [EXPORTER_NAME, holder, leaseMs],
      )) as [unknown[], number];
      if (held.length === 0) throw new LeaseLost();
      await manager.query(
        `UPDATE ${this.batchTable} SET "attempts" = "attempts" + 1, "first_attempt_at" = coalesce("first_attempt_at", $2::timestamptz), ` +
          `"next_attempt_at" = $3::timestamptz WHERE "id" = $1`,
        [id, new Date(now).toISOString(), new Date(retryAt).toISOString()],
      );
    });
  }

  /** The ingest URL acknowledged the batch: never sent again (its body is dropped: the row stays as a record). */
  async acknowledge(id: string, now: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE ${this.batchTable} SET "state" = 'acknowledged', "acknowledged_at" = $2::timestamptz, "body" = '', "last_error" = NULL WHERE "id" = $1`,
      [id, new Date(now).toISOString()],
    );
  }

  /** An attempt failed: why, and when the next one is due. */
  async failed(id: string, error: string, retryAt: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE ${this.batchTable} SET "last_error" = $2, "next_attempt_at" = $3::timestamptz WHERE "id" = $1`,
      [id, error.slice(0, 500), new Date(retryAt).toISOString()],
    );
  }

  /** A batch that may no longer be sent (Stripe's window): kept, with why, for reconciliation; never sent again. */
  async hold(id: string, reason: string): Promise<void> {
    await this.dataSource.query(`UPDATE ${this.batchTable} SET "state" = 'held', "last_error" = $2 WHERE "id" = $1`, [
      id,
      reason,
    ]);
  }

  /** Batches by state (the metrics' gauge, the tests). */
  async countByState(): Promise<Record<string, number>> {
    const rows: Array<{ state: string; n: string }> = await this.dataSource.query(
      `SELECT "state", count(*)::text AS "n" FROM ${this.batchTable} GROUP BY "state"`,
    );
    return Object.fromEntries(rows.map((row) => [row.state, Number(row.n)]));
  }

  /** Deletes acknowledged batches older than `ackedDays` and held ones older than `heldDays`. */
  async prune(ackedDays: number, heldDays: number): Promise<number> {
    const acked = await deleteInBatches(
      this.dataSource,
      this.batchTable,
      `"state" = 'acknowledged' AND "acknowledged_at" < now() - $1 * interval '1 day'`,
      [ackedDays],
      50,
    );
    const held = await deleteInBatches(
      this.dataSource,
      this.batchTable,
      `"state" = 'held' AND "created_at" < now() - $1 * interval '1 day'`,
      [heldDays],
      50,
    );
    return acked + held;
  }
}
