import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { GATEWAY_DATA_SOURCE, schemaOf } from '../database/data-source.options';
import type { ThresholdEventType, ThresholdPolicyName } from './threshold-event-table';

/** Candidates looked up per query by `alreadyWritten`. */
const WRITTEN_QUERY_BATCH = 1_000;

/** A threshold crossed, before it is written: from a request's decision, or found by a reconciliation. */
export interface ThresholdCandidate {
  consumer: string;
  policy: ThresholdPolicyName;
  /** A window's threshold in percent of its limit; the credits' balance level. */
  threshold: number;
  /** A window's period; unused for the credits (their arming generation is looked up when written). */
  periodStartMs: number;
  periodEndMs: number;
  limit: number | null;
  used: number | null;
  balance: number | null;
  crossedAtMs: number;
  source: 'request' | 'reconciler';
}

/** An event as written, and as its outbox message carries it (docs/alerts.md, "The event"). */
export interface ThresholdEvent {
  id: string;
  type: ThresholdEventType;
  consumer: string;
  policy: ThresholdPolicyName;
  periodStart: string;
  periodEnd: string | null;
  threshold: number;
  arming: string | null;
  limit: number | null;
  used: number | null;
  balance: number | null;
  crossedAt: string;
}

/**
 * Why a candidate wrote nothing: its event exists; its period is over; a top-up after the crossing lifted the balance
 * above the level again; or no ledger row ever put the balance above the level (nothing armed it).
 */
export type NotWritten = 'duplicate' | 'period-over' | 'undone' | 'not-armed';

export const typeOf = (candidate: Pick<ThresholdCandidate, 'policy' | 'threshold'>): ThresholdEventType =>
  candidate.policy !== 'credits'
    ? 'quota.threshold_crossed'
    : candidate.threshold > 0
      ? 'credits.low_balance'
      : 'credits.exhausted';

/** A threshold_events row as a query reads it (bigints and dates as the driver gives them). */
interface ThresholdEventRecord {
  id: string;
  type: ThresholdEventType;
  consumer: string;
  policy: ThresholdPolicyName;
  period_start: Date | string;
  period_end: Date | string | null;
  threshold: string;
  arming: string;
  quota: string | null;
  used: string | null;
  balance: string | null;
  crossed_at: Date | string;
  source: 'request' | 'reconciler';
}

const EVENT_COLUMNS =
  'id, type, consumer, policy, period_start, period_end, threshold, arming, quota, used, balance, crossed_at, source';

/** The event as its outbox message carries it, from its row: the one mapping (the admin list's and the tests'). */
function eventOf(r: ThresholdEventRecord): ThresholdEvent {
  const num = (value: string | null) => (value === null ? null : Number(value));
  return {
    id: r.id,
    type: r.type,
    consumer: r.consumer,
    policy: r.policy,
    periodStart: new Date(r.period_start).toISOString(),
    periodEnd: r.period_end === null ? null : new Date(r.period_end).toISOString(),
    threshold: Number(r.threshold),
    arming: r.arming || null,
    limit: num(r.quota),
    used: num(r.used),
    balance: num(r.balance),
    crossedAt: new Date(r.crossed_at).toISOString(),
  };
}

/**
 * threshold_events and outbox_messages (docs/alerts.md): one event per consumer × policy × period × threshold ×
 * arming generation, whoever writes it and however often. Each write takes a transaction-scoped advisory lock on
 * (consumer, policy), so writers of one consumer's policy take turns; then checks that the period is still current
 * (the gateway's clock) and that no event of the same period exists (a rolling day window's period is named from
 * each decision's reset, a few milliseconds apart between instances: the same window is any start within half its
 * length), then inserts with ON CONFLICT DO NOTHING (the unique key, the last word), and writes the outbox message
 * only for a row actually inserted, in the same transaction.
 */
@Injectable()
export class ThresholdEventsRepository {
  constructor(@InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource) {}

  private get schema(): string {
    return schemaOf(this.dataSource);
  }

  /** Writes the candidate's event and its outbox message, once; answers the event, or why nothing was written. */
  async record(candidate: ThresholdCandidate, nowMs: number): Promise<ThresholdEvent | NotWritten> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [
        `threshold-events:${candidate.consumer}:${candidate.policy}`,
      ]);
      const identity =
        candidate.policy === 'credits'
          ? await this.creditsIdentity(manager, candidate)
          : await this.windowIdentity(manager, candidate, nowMs);
      if (typeof identity === 'string') return identity;
      const event: ThresholdEvent = {
        id: randomUUID(),
        type: typeOf(candidate),
        consumer: candidate.consumer,
        policy: candidate.policy,
        periodStart: new Date(identity.periodStartMs).toISOString(),
        periodEnd: identity.periodEndMs === null ? null : new Date(identity.periodEndMs).toISOString(),
        threshold: candidate.threshold,
        arming: identity.arming || null,
        limit: candidate.limit,
        used: candidate.used,
        balance: candidate.balance,
        crossedAt: new Date(candidate.crossedAtMs).toISOString(),
      };
      const inserted: unknown[] = await manager.query(
        `INSERT INTO "${this.schema}"."threshold_events" (id, type, consumer, policy, period_start, period_end, threshold, arming, quota, used, balance, crossed_at, source, created_at) ` +
          `VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ` +
          `ON CONFLICT (consumer, policy, period_start, threshold, arming) DO NOTHING RETURNING id`,
        [
          event.id,
          event.type,
          event.consumer,
          event.policy,
          event.periodStart,
          event.periodEnd,
          event.threshold,
          identity.arming,
          event.limit,
          event.used,
          event.balance,
          event.crossedAt,
          candidate.source,
          new Date(nowMs),
        ],
      );
      if (inserted.length === 0) return 'duplicate';
      await manager.query(
        `INSERT INTO "${this.schema}"."outbox_messages" (id, kind, consumer, payload, created_at, available_at, state, attempts) ` +
          `VALUES ($1, $2, $3, $4::jsonb, $5, $5, 'pending', 0)`,
        [randomUUID(), event.type, event.consumer, JSON.stringify(event), new Date(nowMs)],
      );
      return event;
    });
  }

  /** A window's period, if still current and without its event yet. */
  private async windowIdentity(
    manager: EntityManager,
    candidate: ThresholdCandidate,
    nowMs: number,
  ): Promise<{ periodStartMs: number; periodEndMs: number; arming: string } | NotWritten> {
    if (candidate.periodEndMs <= nowMs) return 'period-over';
    const half = (candidate.periodEndMs - candidate.periodStartMs) / 2;
    const same: unknown[] = await manager.query(
      `SELECT 1 FROM "${this.schema}"."threshold_events" WHERE consumer = $1 AND policy = $2 AND threshold = $3 ` +
        `AND arming = '' AND period_start > $4 AND period_start < $5 LIMIT 1`,
      [
        candidate.consumer,
        candidate.policy,
        candidate.threshold,
        new Date(candidate.periodStartMs - half),
        new Date(candidate.periodStartMs + half),
      ],
    );
    if (same.length > 0) return 'duplicate';
    return { periodStartMs: candidate.periodStartMs, periodEndMs: candidate.periodEndMs, arming: '' };
  }

  /**
   * The credits' arming generation for a level: the last ledger row (top-up, set or refill) at or before the
   * crossing that left the balance above the level. A row after the crossing that lifted it above again undid the
   * crossing (the level is armed afresh, for the next fall): nothing is written for it.
   */
  private async creditsIdentity(
    manager: EntityManager,
    candidate: ThresholdCandidate,
  ): Promise<{ periodStartMs: number; periodEndMs: null; arming: string } | NotWritten> {
    const ledger = `"${this.schema}"."credit_ledger"`;
    const crossedAt = new Date(candidate.crossedAtMs);
    const lifted: unknown[] = await manager.query(
      `SELECT 1 FROM ${ledger} WHERE consumer = $1 AND balance_after > $2 AND at > $3 LIMIT 1`,
      [candidate.consumer, candidate.threshold, crossedAt],
    );
    if (lifted.length > 0) return 'undone';
    const [armed]: Array<{ id: string; at: Date }> = await manager.query(
      `SELECT id, at FROM ${ledger} WHERE consumer = $1 AND balance_after > $2 AND at <= $3 ORDER BY at DESC, id DESC LIMIT 1`,
      [candidate.consumer, candidate.threshold, crossedAt],
    );
    if (armed === undefined) return 'not-armed';
    return { periodStartMs: new Date(armed.at).getTime(), periodEndMs: null, arming: armed.id };
  }

  /**
   * Which of `candidates` (their indexes) have their event already, by the rules `record` checks, in one query per
   * WRITTEN_QUERY_BATCH of them: a window's, any event of the same consumer, policy and threshold whose period starts
   * within half the window's length of the candidate's; the credits', the event of the generation that armed the
   * level at the crossing. Only a shortcut: what it does not find goes to `record`, which has the last word.
   */
  async alreadyWritten(candidates: readonly ThresholdCandidate[]): Promise<Set<number>> {
    const found = new Set<number>();
    for (let from = 0; from < candidates.length; from += WRITTEN_QUERY_BATCH) {
      const batch = candidates.slice(from, from + WRITTEN_QUERY_BATCH);
      const half = (c: ThresholdCandidate) => (c.periodEndMs - c.periodStartMs) / 2;
      const rows: Array<{ i: string }> = await this.dataSource.query(
        `SELECT c.i FROM unnest($1::text[], $2::text[], $3::bigint[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[]) ` +
          `WITH ORDINALITY AS c(consumer, policy, threshold, low, high, crossed_at, i) ` +
          `WHERE EXISTS (SELECT 1 FROM "${this.schema}"."threshold_events" e ` +
          `WHERE e.consumer = c.consumer AND e.policy = c.policy AND e.threshold = c.threshold AND CASE WHEN c.policy = 'credits' ` +
          `THEN e.arming = (SELECT l.id::text FROM "${this.schema}"."credit_ledger" l WHERE l.consumer = c.consumer ` +
          `AND l.balance_after > c.threshold AND l.at <= c.crossed_at ORDER BY l.at DESC, l.id DESC LIMIT 1) ` +
          `ELSE e.arming = '' AND e.period_start > c.low AND e.period_start < c.high END)`,
        [
          batch.map((c) => c.consumer),
          batch.map((c) => c.policy),
          batch.map((c) => c.threshold),
          batch.map((c) => new Date(c.policy === 'credits' ? 0 : c.periodStartMs - half(c))),
          batch.map((c) => new Date(c.policy === 'credits' ? 0 : c.periodStartMs + half(c))),
          batch.map((c) => new Date(c.crossedAtMs)),
        ],
      );
      for (const row of rows) found.add(from + Number(row.i) - 1);
    }
    return found;
  }

  /** The events of a consumer, oldest first (tests). */
  async eventsOf(consumer: string): Promise<Array<ThresholdEvent & { source: string }>> {
    const rows: ThresholdEventRecord[] = await this.dataSource.query(
      `SELECT ${EVENT_COLUMNS} FROM "${this.schema}"."threshold_events" WHERE consumer = $1 ORDER BY crossed_at, threshold, policy`,
      [consumer],
    );
    return rows.map((r) => ({ ...eventOf(r), source: r.source }));
  }

  /**
   * One page of a consumer's events, newest first (the order they were written in: their seq), keyset-paged on seq:
   * `after` is the last event of the previous page (undefined: no such event of the consumer).
   */
  async page(
    consumer: string,
    page: { limit: number; after?: string; policy?: ThresholdPolicyName; type?: ThresholdEventType },
  ): Promise<{ items: ThresholdEvent[]; next: string | null } | undefined> {
    const table = `"${this.schema}"."threshold_events"`;
    const where = ['consumer = $1'];
    const params: unknown[] = [consumer];
    if (page.after !== undefined) {
      const [last]: unknown[] = await this.dataSource.query(`SELECT 1 FROM ${table} WHERE id = $1 AND consumer = $2`, [
        page.after,
        consumer,
      ]);
      if (last === undefined) return undefined;
      params.push(page.after);
      where.push(`seq < (SELECT p.seq FROM ${table} p WHERE p.id = $${params.length})`);
    }
    if (page.policy !== undefined) where.push(`policy = $${params.push(page.policy)}`);
    if (page.type !== undefined) where.push(`type = $${params.push(page.type)}`);
    params.push(page.limit + 1);
    const rows: ThresholdEventRecord[] = await this.dataSource.query(
      `SELECT ${EVENT_COLUMNS} FROM ${table} WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $${params.length}`,
      params,
    );
    const items = rows.slice(0, page.limit).map(eventOf);
    return { items, next: rows.length > page.limit ? items[items.length - 1].id : null };
  }

  /** The outbox messages of a consumer, in the order they were written (their seq): tests. */
  async outboxOf(
    consumer: string,
  ): Promise<Array<{ id: string; kind: string; state: string; payload: ThresholdEvent }>> {
    return this.dataSource.query(
      `SELECT id, kind, state, payload FROM "${this.schema}"."outbox_messages" WHERE consumer = $1 ORDER BY seq`,
      [consumer],
    );
  }

  /**
   * Deletes up to `batch` events no write can ever need again (docs/alerts.md, "Retention"), answering how many: a
   * window's whose period ended before `cutoffMs` (a candidate of an ended period writes nothing: `period-over`),
   * and a credit level's crossed before `cutoffMs` that a later ledger row has re-armed since (a candidate of that
   * generation is `undone`). An event whose period is current, or whose level is still armed by its generation,
   * is kept whatever its age: it is what makes "exactly once" hold.
   */
  async pruneEvents(cutoffMs: number, batch: number): Promise<number> {
    const s = this.schema;
    const [, deleted]: [unknown, number] = await this.dataSource.query(
      `DELETE FROM "${s}"."threshold_events" WHERE id IN (SELECT e.id FROM "${s}"."threshold_events" e WHERE ` +
        `(e.policy <> 'credits' AND e.period_end < $1) OR (e.policy = 'credits' AND e.crossed_at < $1 AND EXISTS (` +
        `SELECT 1 FROM "${s}"."credit_ledger" l WHERE l.consumer = e.consumer AND l.balance_after > e.threshold AND l.at > e.crossed_at)) ` +
        `LIMIT $2)`,
      [new Date(cutoffMs), batch],
    );
    return deleted;
  }

  /**
   * Who may have crossed a threshold lately: consumers with answers in the usage history since `sinceMs` (its hours),
   * or with credit spend recorded since the UTC day `sinceDay`.
   */
  async recentConsumers(sinceMs: number, sinceDay: string, max: number): Promise<string[]> {
    const rows: Array<{ consumer: string }> = await this.dataSource.query(
      `SELECT consumer FROM "${this.schema}"."usage_hourly" WHERE hour >= $1 AND consumer NOT IN ('*', '(anonymous)', '(overflow)') ` +
        `UNION SELECT consumer FROM "${this.schema}"."credit_spend_daily" WHERE day >= $2::date ORDER BY consumer LIMIT $3`,
      [new Date(sinceMs - (sinceMs % 3_600_000)), sinceDay, max],
    );
    return rows.map((r) => r.consumer);
  }

  /** Admitted answers of each of `consumers` in the usage history's hours from `fromMs` on, in one query. */
  async usedSinceByConsumer(consumers: readonly string[], fromMs: number): Promise<Map<string, number>> {
    const rows: Array<{ consumer: string; used: string | null }> = await this.dataSource.query(
      `SELECT consumer, sum(requests - rate_limited) AS used FROM "${this.schema}"."usage_hourly" ` +
        `WHERE consumer = ANY($1) AND hour >= $2 GROUP BY consumer`,
      [consumers, new Date(fromMs)],
    );
    return new Map(rows.map((row) => [row.consumer, Number(row.used ?? 0)]));
  }

  /** Admitted answers (every answer but the 429s) of `consumer` in the usage history's hours from `fromMs` on. */
  async usedSince(consumer: string, fromMs: number): Promise<number> {
    const [row]: Array<{ used: string | null }> = await this.dataSource.query(
      `SELECT sum(requests - rate_limited) AS used FROM "${this.schema}"."usage_hourly" WHERE consumer = $1 AND hour >= $2`,
      [consumer, new Date(fromMs)],
    );
    return Number(row?.used ?? 0);
  }
}
