import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, MoreThanOrEqual } from 'typeorm';
import { GATEWAY_DATA_SOURCE, schemaOf } from '../database/data-source.options';
import { CreditLedgerEntity, CreditLedgerRow } from './credit-entities';

/** A ledger entry as the admin API shows it. */
export interface LedgerEntry {
  id: string;
  at: Date;
  kind: CreditLedgerRow['kind'];
  amount: number;
  balanceAfter: number;
  reason: string | null;
  actor: string;
}

/** A ledger entry to write. */
export interface NewLedgerEntry {
  consumer: string;
  at: Date;
  kind: CreditLedgerRow['kind'];
  amount: number;
  balanceAfter: number;
  reason: string | null;
  actor: string;
  periodStart?: Date;
}

/** What the ledger and the spend history say of a consumer's balance (before this instance's unflushed spend). */
export interface LedgerTotals {
  /** The sum of every entry's amount, less every day's spend. */
  balance: number;
  /** The start of the last refilled period (Unix ms; 0: none). */
  refilledPeriodStartMs: number;
}

const toEntry = (row: CreditLedgerRow): LedgerEntry => ({
  id: row.id,
  at: row.at,
  kind: row.kind,
  amount: Number(row.amount),
  balanceAfter: Number(row.balance_after),
  reason: row.reason,
  actor: row.actor,
});

/** The credit ledger and the spend per day, in the gateway's database. */
@Injectable()
export class CreditLedgerRepository {
  constructor(@InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource) {}

  private get schema(): string {
    return schemaOf(this.dataSource);
  }

  /** Writes an entry (in `manager`'s transaction when given). */
  async insert(entry: NewLedgerEntry, manager: EntityManager = this.dataSource.manager): Promise<LedgerEntry> {
    const row: CreditLedgerRow = {
      id: randomUUID(),
      consumer: entry.consumer,
      at: entry.at,
      kind: entry.kind,
      amount: String(entry.amount),
      balance_after: String(entry.balanceAfter),
      reason: entry.reason,
      actor: entry.actor,
      period_start: entry.periodStart ?? null,
    };
    await manager.insert(CreditLedgerEntity, row);
    return toEntry(row);
  }

  /**
   * A period's refill, once: a second instance that applied the same period's refill (a store rebuilt meanwhile)
   * writes nothing. Answers whether this call wrote it.
   */
  async insertRefill(entry: NewLedgerEntry & { periodStart: Date }): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO "${this.schema}"."credit_ledger" (id, consumer, at, kind, amount, balance_after, reason, actor, period_start) ` +
        `VALUES ($1, $2, $3, 'refill', $4, $5, NULL, $6, $7) ON CONFLICT (consumer, period_start) DO NOTHING RETURNING id`,
      [randomUUID(), entry.consumer, entry.at, entry.amount, entry.balanceAfter, entry.actor, entry.periodStart],
    );
    return rows.length > 0;
  }

  /**
   * One flush of an instance's spend, with its heartbeat and acknowledgement, in one transaction: the spend is
   * written and `barrier` acknowledged together (an acknowledgement means the spend is durable), unless a rebuild
   * fenced this instance since its last acknowledgement (it was silent past the bound): then the spend it held is
   * not written (that rebuild counted without it) and `dropped` says so. Rows in key order (no deadlock between
   * instances).
   */
  async flushSpend(
    instance: string,
    rows: Array<{ consumer: string; day: string; spent: number }>,
    barrier: number,
  ): Promise<{ dropped: boolean }> {
    return this.dataSource.transaction(async (manager) => {
      const table = `"${this.schema}"."credit_spend_holder"`;
      await manager.query(
        `INSERT INTO ${table} (id, seen_at, acked_barrier, fenced_barrier) VALUES ($1, now(), 0, 0) ON CONFLICT (id) DO NOTHING`,
        [instance],
      );
      const [holder]: Array<{ acked: string; fenced: string }> = await manager.query(
        `SELECT acked_barrier AS acked, fenced_barrier AS fenced FROM ${table} WHERE id = $1 FOR UPDATE`,
        [instance],
      );
      const fenced = Number(holder.fenced);
      const dropped = fenced > Number(holder.acked);
      if (!dropped && rows.length > 0) {
        const sorted = [...rows].sort((a, b) => (a.consumer + a.day < b.consumer + b.day ? -1 : 1));
        const values = sorted.map((_, i) => `($${3 * i + 1}, $${3 * i + 2}::date, $${3 * i + 3}::bigint)`).join(', ');
        await manager.query(
          `INSERT INTO "${this.schema}"."credit_spend_daily" (consumer, day, spent) VALUES ${values} ` +
            `ON CONFLICT (consumer, day) DO UPDATE SET spent = "credit_spend_daily".spent + EXCLUDED.spent`,
          sorted.flatMap((r) => [r.consumer, r.day, r.spent]),
        );
      }
      await manager.query(
        `UPDATE ${table} SET seen_at = now(), acked_barrier = GREATEST(acked_barrier, $2, fenced_barrier) WHERE id = $1`,
        [instance, barrier],
      );
      return { dropped: dropped && rows.length > 0 };
    });
  }

  /** The last rebuild barrier (0: none yet): what a flush acknowledges. */
  async latestBarrier(): Promise<number> {
    const [row]: Array<{ barrier: string | null }> = await this.dataSource.query(
      `SELECT max(barrier) AS barrier FROM "${this.schema}"."credit_rebuild"`,
    );
    return Number(row?.barrier ?? 0);
  }

  /** Opens a rebuild of `consumer`'s balance: its barrier, which every live instance will acknowledge. */
  async openRebuild(consumer: string, instance: string): Promise<number> {
    const [row]: Array<{ barrier: string }> = await this.dataSource.query(
      `INSERT INTO "${this.schema}"."credit_rebuild" (consumer, instance, requested_at) VALUES ($1, $2, now()) RETURNING barrier`,
      [consumer, instance],
    );
    return Number(row.barrier);
  }

  /** The live instances (seen within `liveMs` by the database's clock) that have not acknowledged `barrier`. */
  async laggards(barrier: number, liveMs: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT id FROM "${this.schema}"."credit_spend_holder" WHERE acked_barrier < $1 AND seen_at > now() - ($2 * interval '1 millisecond')`,
      [barrier, liveMs],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Fences the instances that still have not acknowledged `barrier` (a flush that commits first wins the row
   * lock and is not fenced): the spend they hold is not recorded when they speak again. Answers how many.
   */
  async fence(barrier: number, instances: string[]): Promise<number> {
    if (instances.length === 0) return 0;
    // TypeORM answers an UPDATE with [rows, affected].
    const [, affected]: [unknown[], number] = await this.dataSource.query(
      `UPDATE "${this.schema}"."credit_spend_holder" SET fenced_barrier = GREATEST(fenced_barrier, $1) ` +
        `WHERE id = ANY($2) AND acked_barrier < $1`,
      [barrier, instances],
    );
    return affected;
  }

  /** Closes a rebuild with its result. */
  async closeRebuild(barrier: number, balance: number, fenced: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE "${this.schema}"."credit_rebuild" SET completed_at = now(), balance = $2, fenced = $3 WHERE barrier = $1`,
      [barrier, balance, fenced],
    );
  }

  /** An instance that stops: it holds nothing any more (its last flush is written). */
  async forgetHolder(instance: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM "${this.schema}"."credit_spend_holder" WHERE id = $1`, [instance]);
  }

  /** The balance the ledger and the recorded spend say, and the last refilled period. */
  async totals(consumer: string): Promise<LedgerTotals> {
    const [row]: Array<{ credited: string | null; spent: string | null; refilled: Date | null }> =
      await this.dataSource.query(
        `SELECT (SELECT sum(amount) FROM "${this.schema}"."credit_ledger" WHERE consumer = $1) AS credited, ` +
          `(SELECT sum(spent) FROM "${this.schema}"."credit_spend_daily" WHERE consumer = $1) AS spent, ` +
          `(SELECT max(period_start) FROM "${this.schema}"."credit_ledger" WHERE consumer = $1 AND kind = 'refill') AS refilled`,
        [consumer],
      );
    return {
      balance: Number(row?.credited ?? 0) - Number(row?.spent ?? 0),
      refilledPeriodStartMs: row?.refilled ? new Date(row.refilled).getTime() : 0,
    };
  }

  /** Entries since `since`, newest first (at most `limit`). */
  async entries(consumer: string, since: Date, limit: number): Promise<LedgerEntry[]> {
    const rows = await this.dataSource.manager.find(CreditLedgerEntity, {
      where: { consumer, at: MoreThanOrEqual(since) },
      order: { at: 'DESC', id: 'ASC' },
      take: limit,
    });
    return rows.map(toEntry);
  }

  /** Spend per UTC day from `fromDay` (YYYY-MM-DD) on, as recorded. */
  async spendSince(consumer: string, fromDay: string): Promise<Map<string, number>> {
    const rows: Array<{ day: string; spent: string }> = await this.dataSource.query(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, spent FROM "${this.schema}"."credit_spend_daily" WHERE consumer = $1 AND day >= $2::date`,
      [consumer, fromDay],
    );
    return new Map(rows.map((r) => [r.day, Number(r.spent)]));
  }
}
