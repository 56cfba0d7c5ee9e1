import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { GATEWAY_DATA_SOURCE, schemaOf } from '../database/data-source.options';
import { retryDelayMs } from './retry-schedule';
import { ENDPOINT_DISABLED_TYPE, FANNED_OUT_KINDS } from './webhook-events';
import { ERROR_TEXT_MAX, newDelivery } from './webhook-endpoints.service';
import { WebhookDeliveryEntity, WebhookDeliveryRow } from './webhook-tables';

/** A delivery claimed by this instance, with what its attempt needs. */
export interface ClaimedDelivery {
  id: string;
  messageId: string;
  kind: string;
  consumer: string;
  attempts: number;
  /** The message as its outbox row holds it: the body of every attempt. */
  payload: Record<string, unknown>;
  /** `secrets`: the endpoint's secret, then the one a rotation replaced while it still signs (both sign). */
  endpoint: { id: string; url: string; secrets: string[] } | null;
  email: string | null;
}

/** How an attempt ended. */
export interface AttemptOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
  latencyMs: number;
}

/** What recording an attempt led to. */
export interface AttemptRecorded {
  state: WebhookDeliveryRow['state'];
  nextAttemptAt: Date | null;
  /** The endpoint was disabled by this failure (its failures had lasted WEBHOOK_DISABLE_AFTER_MS). */
  endpointDisabled: boolean;
}

const placeholders = (from: number, count: number): string =>
  Array.from({ length: count }, (_, i) => `$${from + i}`).join(', ');

/**
 * The delivery worker's SQL (docs/webhooks.md): the fan-out of outbox messages into deliveries, the claim of due
 * deliveries (short transactions, FOR UPDATE SKIP LOCKED, a lease that a dead instance's claim outlives), and the
 * record of each attempt with what follows from it (the next attempt, giving up, the endpoint failing or disabled).
 * Every time comes from the gateway's clock, never the database's, so that tests drive it.
 */
/** The secrets that sign a delivery at `nowMs`: the endpoint's, and the one a rotation replaced until its overlap ends. */
function secretsOf(
  row: { secret: string | null; previous_secret: string | null; previous_secret_until: Date | null },
  nowMs: number,
): string[] {
  const overlapping =
    row.previous_secret !== null &&
    row.previous_secret_until !== null &&
    new Date(row.previous_secret_until).getTime() > nowMs;
  return overlapping ? [row.secret!, row.previous_secret!] : [row.secret!];
}

@Injectable()
export class WebhookDeliveriesRepository {
  constructor(@InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource) {}

  private get s(): string {
    return schemaOf(this.dataSource);
  }

  /**
   * Turns pending outbox messages of the webhook kinds into deliveries: one per enabled endpoint that takes the
   * kind (the consumer's own and the fleet-wide ones), one to the consumer's contact email if it has one. The
   * message is marked dispatched in the same transaction, so each is fanned out once. Answers how many.
   */
  async fanOut(nowMs: number, limit = 100): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const messages: Array<{ id: string; seq: string; kind: string; consumer: string }> = await manager.query(
        `SELECT id, seq, kind, consumer FROM "${this.s}"."outbox_messages" ` +
          `WHERE state = 'pending' AND kind IN (${placeholders(2, FANNED_OUT_KINDS.length)}) ` +
          `ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit, ...FANNED_OUT_KINDS],
      );
      if (messages.length === 0) return 0;
      const now = new Date(nowMs);
      const deliveries: WebhookDeliveryRow[] = [];
      for (const message of messages) {
        const endpoints: Array<{ id: string }> = await manager.query(
          `SELECT id FROM "${this.s}"."webhook_endpoints" WHERE (consumer = $1 OR consumer IS NULL) AND enabled ` +
            `AND (event_types IS NULL OR event_types @> jsonb_build_array($2::text)) ORDER BY created_at, id`,
          [message.consumer, message.kind],
        );
        const [contact]: Array<{ email: string | null }> = await manager.query(
          `SELECT email FROM "${this.s}"."consumers" WHERE name = $1`,
          [message.consumer],
        );
        const of = {
          messageId: message.id,
          kind: message.kind,
          consumer: message.consumer,
          messageSeq: message.seq,
        };
        for (const endpoint of endpoints) deliveries.push(newDelivery(of, now, { endpointId: endpoint.id }));
        if (contact?.email) deliveries.push(newDelivery(of, now, { email: contact.email }));
      }
      if (deliveries.length) await manager.insert(WebhookDeliveryEntity, deliveries);
      await manager.query(
        `UPDATE "${this.s}"."outbox_messages" SET state = 'dispatched' WHERE id IN (${placeholders(1, messages.length)})`,
        messages.map((m) => m.id),
      );
      return messages.length;
    });
  }

  /**
   * Claims up to `limit` due deliveries, at most one per endpoint, each leased until `leaseUntilMs`. A delivery is
   * due when its time has come, its lease (if any) ran out, and, for an endpoint: the endpoint is enabled, no
   * delivery to it is in flight (leased), and no older message of the same consumer is still pending for it, as a
   * delivery or as a message not fanned out yet (an endpoint gets a consumer's messages in creation order: their
   * `seq`, never their time, which several share; a test event's delivery, written at once, must not overtake a
   * threshold event another instance is fanning out). The claims of the fleet take turns (an advisory lock held for
   * this short transaction), so two instances never send to one endpoint at once.
   */
  async claim(nowMs: number, limit: number, leaseUntilMs: number): Promise<ClaimedDelivery[]> {
    const now = new Date(nowMs);
    const ids = await this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('webhook-deliveries:claim'))`);
      const due: Array<{ id: string; endpoint_id: string | null }> = await manager.query(
        `SELECT d.id, d.endpoint_id FROM "${this.s}"."webhook_deliveries" d ` +
          `LEFT JOIN "${this.s}"."webhook_endpoints" e ON e.id = d.endpoint_id ` +
          `WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1) ` +
          `AND (d.endpoint_id IS NULL OR (e.enabled AND NOT EXISTS (` +
          `SELECT 1 FROM "${this.s}"."webhook_deliveries" o WHERE o.endpoint_id = d.endpoint_id AND o.state = 'pending' AND o.id <> d.id ` +
          `AND (o.lease_until > $1 OR (o.consumer = d.consumer AND ` +
          `(o.message_seq, o.created_at, o.id) < (d.message_seq, d.created_at, d.id)))) ` +
          // An older message of the consumer not fanned out yet (another instance's fan-out holds it, uncommitted,
          // or no tick took it yet) will be older than this one once it is: wait for it too.
          `AND NOT EXISTS (SELECT 1 FROM "${this.s}"."outbox_messages" m WHERE m.state = 'pending' ` +
          `AND m.consumer = d.consumer AND m.seq < d.message_seq AND m.kind IN (${placeholders(3, FANNED_OUT_KINDS.length)})))) ` +
          `ORDER BY d.message_seq, d.created_at, d.id LIMIT $2 FOR UPDATE OF d SKIP LOCKED`,
        [now, limit * 4, ...FANNED_OUT_KINDS],
      );
      const taken = new Set<string>();
      const chosen: string[] = [];
      for (const row of due) {
        if (chosen.length >= limit) break;
        if (row.endpoint_id !== null && taken.has(row.endpoint_id)) continue;
        if (row.endpoint_id !== null) taken.add(row.endpoint_id);
        chosen.push(row.id);
      }
      if (chosen.length)
        await manager.query(
          `UPDATE "${this.s}"."webhook_deliveries" SET lease_until = $1 WHERE id IN (${placeholders(2, chosen.length)})`,
          [new Date(leaseUntilMs), ...chosen],
        );
      return chosen;
    });
    if (ids.length === 0) return [];
    const rows: Array<{
      id: string;
      message_id: string;
      kind: string;
      consumer: string;
      attempts: number;
      payload: Record<string, unknown>;
      endpoint_id: string | null;
      url: string | null;
      secret: string | null;
      previous_secret: string | null;
      previous_secret_until: Date | null;
      email: string | null;
    }> = await this.dataSource.query(
      `SELECT d.id, d.message_id, d.kind, d.consumer, d.attempts, d.endpoint_id, d.email, m.payload, e.url, e.secret, ` +
        `e.previous_secret, e.previous_secret_until ` +
        `FROM "${this.s}"."webhook_deliveries" d JOIN "${this.s}"."outbox_messages" m ON m.id = d.message_id ` +
        `LEFT JOIN "${this.s}"."webhook_endpoints" e ON e.id = d.endpoint_id WHERE d.id IN (${placeholders(1, ids.length)}) ` +
        `ORDER BY d.message_seq, d.created_at, d.id`,
      ids,
    );
    return rows.map((row) => ({
      id: row.id,
      messageId: row.message_id,
      kind: row.kind,
      consumer: row.consumer,
      attempts: row.attempts,
      payload: row.payload,
      endpoint:
        row.endpoint_id && row.url && row.secret
          ? { id: row.endpoint_id, url: row.url, secrets: secretsOf(row, nowMs) }
          : null,
      email: row.email,
    }));
  }

  /**
   * The attempt's row and its consequences, in one transaction: delivered; or the next attempt on the schedule, or
   * given up after the last; and for an endpoint, its failure span (failing_since) cleared by a success or started
   * by a failure, and the endpoint disabled once the span reaches `disableAfterMs` (the consumer's contact email is
   * then told, through a delivery of its own).
   */
  async recordAttempt(
    delivery: ClaimedDelivery,
    outcome: AttemptOutcome,
    nowMs: number,
    disableAfterMs: number,
    random: number = Math.random(),
  ): Promise<AttemptRecorded> {
    const now = new Date(nowMs);
    return this.dataSource.transaction(async (manager) => {
      const attempt = delivery.attempts + 1;
      // The delivery first (the lock order removing an endpoint takes too); gone meanwhile (its endpoint removed):
      // nothing to record, and no attempt row left behind without its delivery.
      const held: unknown[] = await manager.query(
        `SELECT id FROM "${this.s}"."webhook_deliveries" WHERE id = $1 FOR UPDATE`,
        [delivery.id],
      );
      if (held.length === 0) return { state: 'failed' as const, nextAttemptAt: null, endpointDisabled: false };
      await manager.query(
        `INSERT INTO "${this.s}"."webhook_attempts" (id, delivery_id, attempt, at, status_code, latency_ms, error) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          randomUUID(),
          delivery.id,
          attempt,
          now,
          outcome.status,
          Math.round(outcome.latencyMs),
          outcome.error?.slice(0, ERROR_TEXT_MAX) ?? null,
        ],
      );
      const delay = outcome.ok ? null : retryDelayMs(attempt, random);
      const state: WebhookDeliveryRow['state'] = outcome.ok ? 'delivered' : delay === null ? 'failed' : 'pending';
      const nextAttemptAt = state === 'pending' ? new Date(nowMs + delay!) : null;
      await manager.query(
        `UPDATE "${this.s}"."webhook_deliveries" SET state = $2, attempts = $3, next_attempt_at = COALESCE($4, next_attempt_at), ` +
          `lease_until = NULL, last_status = $5, last_error = $6, delivered_at = $7 WHERE id = $1`,
        [
          delivery.id,
          state,
          attempt,
          nextAttemptAt,
          outcome.status,
          outcome.error?.slice(0, ERROR_TEXT_MAX) ?? null,
          outcome.ok ? now : null,
        ],
      );
      let endpointDisabled = false;
      if (delivery.endpoint)
        endpointDisabled = outcome.ok
          ? (await this.recovered(manager, delivery.endpoint.id), false)
          : await this.failed(manager, delivery.endpoint.id, now, disableAfterMs);
      return { state, nextAttemptAt, endpointDisabled };
    });
  }

  /**
   * Deletes up to `batch` finished deliveries (delivered or given up) created before `cutoffMs`, with their
   * attempts, in one transaction: answers how many deliveries. A pending one is kept whatever its age.
   */
  async pruneDeliveries(cutoffMs: number, batch: number): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const rows: Array<{ id: string }> = await manager.query(
        `SELECT id FROM "${this.s}"."webhook_deliveries" WHERE state <> 'pending' AND created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [new Date(cutoffMs), batch],
      );
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => r.id);
      await manager.query(`DELETE FROM "${this.s}"."webhook_attempts" WHERE delivery_id = ANY($1::uuid[])`, [ids]);
      await manager.query(`DELETE FROM "${this.s}"."webhook_deliveries" WHERE id = ANY($1::uuid[])`, [ids]);
      return ids.length;
    });
  }

  /**
   * Deletes up to `batch` outbox messages fanned out (dispatched) before `cutoffMs` that no delivery refers to any
   * longer (a pending or recent delivery still reads its message's payload; a redelivery, its message): answers how
   * many. A message never fanned out (pending) is kept whatever its age.
   */
  async pruneMessages(cutoffMs: number, batch: number): Promise<number> {
    const [, deleted]: [unknown, number] = await this.dataSource.query(
      `DELETE FROM "${this.s}"."outbox_messages" WHERE id IN (SELECT m.id FROM "${this.s}"."outbox_messages" m ` +
        `WHERE m.state = 'dispatched' AND m.created_at < $1 AND NOT EXISTS (` +
        `SELECT 1 FROM "${this.s}"."webhook_deliveries" d WHERE d.message_id = m.id) LIMIT $2)`,
      [new Date(cutoffMs), batch],
    );
    return deleted;
  }

  private async recovered(manager: EntityManager, endpointId: string): Promise<void> {
    await manager.query(
      `UPDATE "${this.s}"."webhook_endpoints" SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`,
      [endpointId],
    );
  }

  /** The failure span starts (or goes on); past `disableAfterMs` the endpoint is disabled and its owner told. */
  private async failed(
    manager: EntityManager,
    endpointId: string,
    now: Date,
    disableAfterMs: number,
  ): Promise<boolean> {
    // TypeORM answers an UPDATE … RETURNING as [rows, count].
    const [[endpoint]]: [Array<{ consumer: string | null; url: string; failing_since: Date; enabled: boolean }>] =
      await manager.query(
        `UPDATE "${this.s}"."webhook_endpoints" SET failing_since = COALESCE(failing_since, $2) WHERE id = $1 ` +
          `RETURNING consumer, url, failing_since, enabled`,
        [endpointId, now],
      );
    if (!endpoint?.enabled || now.getTime() - new Date(endpoint.failing_since).getTime() < disableAfterMs) return false;
    const since = new Date(endpoint.failing_since).toISOString();
    await manager.query(
      `UPDATE "${this.s}"."webhook_endpoints" SET enabled = false, disabled_at = $2, disabled_reason = $3 WHERE id = $1`,
      [endpointId, now, `every delivery failed since ${since}`],
    );
    if (endpoint.consumer === null) return true;
    const [contact]: Array<{ email: string | null }> = await manager.query(
      `SELECT email FROM "${this.s}"."consumers" WHERE name = $1`,
      [endpoint.consumer],
    );
    if (!contact?.email) return true;
    const messageId = randomUUID();
    const payload = {
      id: randomUUID(),
      type: ENDPOINT_DISABLED_TYPE,
      consumer: endpoint.consumer,
      endpoint: { id: endpointId, url: endpoint.url },
      failingSince: since,
      disabledAt: now.toISOString(),
    };
    // Its own message, dispatched at once to the contact email only (never to the endpoints).
    const [message]: Array<{ seq: string }> = await manager.query(
      `INSERT INTO "${this.s}"."outbox_messages" (id, kind, consumer, payload, created_at, available_at, state, attempts) ` +
        `VALUES ($1, $2, $3, $4::jsonb, $5, $5, 'dispatched', 0) RETURNING seq`,
      [messageId, ENDPOINT_DISABLED_TYPE, endpoint.consumer, JSON.stringify(payload), now],
    );
    await manager.insert(
      WebhookDeliveryEntity,
      newDelivery(
        { messageId, kind: ENDPOINT_DISABLED_TYPE, consumer: endpoint.consumer, messageSeq: message.seq },
        now,
        { email: contact.email },
      ),
    );
    return true;
  }
}
