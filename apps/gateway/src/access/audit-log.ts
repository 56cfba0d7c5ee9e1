import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { GATEWAY_DATA_SOURCE, schemaOf } from '../database/data-source.options';
import { deleteInBatches } from '../database/delete-in-batches';
import { AdminRequestContext } from './admin-context';
import { AuditChanges, AuditEntryEntity } from './audit-entry.entity';

export interface AuditChange {
  action: string;
  targetConsumer?: string | null;
  targetKey?: string | null;
  targetToken?: string | null;
  /** The target key's hint (`petk_F7WF…`), so that a reader can tell which key without its id. */
  targetKeyHint?: string | null;
  /** `{field: {before, after}}`: never a key, a token or a hash. */
  changes?: AuditChanges | null;
}

export interface AuditQuery {
  from?: Date;
  to?: Date;
  actor?: string;
  target?: string;
  action?: string;
  limit: number;
  /** `asc` (oldest first, the default) or `desc` (newest first). */
  order?: AuditOrder;
  /** The id of the last row of the previous page: the rows after it in `order`. */
  after?: string;
  /** Only rows about these consumers (a restricted reader's, from consumerFilter); absent: every row. */
  about?: { createdByToken?: string; plans?: string[] } | null;
}

/** What the portal and the console report about their sign-ins (POST /audit/events): kind → audit action. */
export const SIGN_IN_EVENTS = {
  'sign-in': 'user.sign-in',
  'sign-in-failed': 'user.sign-in-failed',
  lockout: 'user.lockout',
  'sign-out': 'user.sign-out',
  'identity-linked': 'user.identity-linked',
  'identity-unlinked': 'user.identity-unlinked',
} as const;
export type SignInEventKind = keyof typeof SIGN_IN_EVENTS;

export interface SignInEvent {
  kind: SignInEventKind;
  /** The person: `account:<email>` (the portal, as typed), `operator:<token name>` (the console); null: unknown. */
  subject: string | null;
  /** Their address (or the IPv6 /64 a web app counts them by), as the web app saw it. */
  address: string | null;
  /** Why (a failure's or a lockout's code, e.g. PAIR_LIMIT), when the web app says. */
  reason: string | null;
}

export const AUDIT_ORDERS = ['asc', 'desc'] as const;
export type AuditOrder = (typeof AUDIT_ORDERS)[number];

/**
 * Refused calls (401/403) get a row each up to this many per source address, status, actor and minute (counted in
 * memory, per instance); the rest of that minute are counted on one aggregate row, never dropped. A flood thus
 * writes a bounded number of rows, and cannot hide a known token's 403s behind anonymous 401s.
 */
export const DENIED_PER_MINUTE = 30;
const RETENTION_EVERY_MS = 60 * 60 * 1000;

/** The fields of `before` and `after` that differ, as `{field: {before, after}}`. */
export function diff(before: Record<string, unknown>, after: Record<string, unknown>): AuditChanges {
  const out: AuditChanges = {};
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const b = before[field] instanceof Date ? (before[field] as Date).toISOString() : (before[field] ?? null);
    const a = after[field] instanceof Date ? (after[field] as Date).toISOString() : (after[field] ?? null);
    if (JSON.stringify(a) !== JSON.stringify(b)) out[field] = { before: b, after: a };
  }
  return out;
}

/**
 * The audit log: append-only. `record` takes the EntityManager of the change's own transaction, so that a change
 * and its row commit together or not at all. Refusals are recorded on their own, rate-limited per source address.
 */
@Injectable()
export class AuditLog implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('AuditLog');
  private readonly denied = new Map<string, { minute: number; count: number }>();
  /** Refusals counted but not yet added to their aggregate row: one upsert in flight per row and instance. */
  private readonly aggregates = new Map<string, { count: number; done: Promise<void> }>();
  private timer?: NodeJS.Timeout;

  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly clock: Clock,
  ) {}

  /** One row, written by `manager` (the change's transaction): the call's actor, request id and source. */
  async record(context: AdminRequestContext, manager: EntityManager, change: AuditChange): Promise<void> {
    await manager.insert(AuditEntryEntity, {
      actorId: context.actor.id,
      actorName: context.actor.name,
      action: change.action,
      targetConsumer: change.targetConsumer ?? null,
      targetKey: change.targetKey ?? null,
      targetToken: change.targetToken ?? null,
      targetKeyHint: change.targetKeyHint ?? null,
      changes: (change.changes ?? null) as never,
      requestId: context.requestId,
      source: context.source,
      onBehalfOf: context.endUser?.onBehalfOf ?? null,
      endUserAddress: context.endUser?.address ?? null,
    });
  }

  /** A row for a change that is not in this database (an unban, in Redis). */
  recordAlone(context: AdminRequestContext, change: AuditChange): Promise<void> {
    return this.record(context, this.dataSource.manager, change);
  }

  /**
   * A refused call (401: ANONYMOUS_ACTOR, or 403): its own row within DENIED_PER_MINUTE for its source, status,
   * actor and minute, else one more on that minute's aggregate row. False when the database refused the write.
   */
  async recordDenied(
    context: AdminRequestContext,
    status: number,
    detail: AuditChanges,
    now = this.clock.now(),
  ): Promise<boolean> {
    const source = context.source ?? 'unknown';
    const minute = Math.floor(now / 60_000);
    const budget = `${status}|${minute}|${context.actor.id ?? context.actor.name}|${source}`.slice(0, 200);
    const seen = this.denied.get(budget);
    const count = (seen?.count ?? 0) + 1;
    if (this.denied.size > 10_000) this.forgetOld(minute);
    this.denied.set(budget, { minute, count });
    const action = status === 401 ? 'auth.unauthorized' : 'auth.forbidden';
    try {
      if (count <= DENIED_PER_MINUTE) await this.record(context, this.dataSource.manager, { action, changes: detail });
      else await this.countOnAggregate(budget, context, action, { minute: new Date(minute * 60_000), detail });
      return true;
    } catch (error) {
      this.logger.warn(`Could not record a refused admin call: ${(error as Error).message}`);
      return false;
    }
  }

  /**
   * A sign-in event a web app reports (POST /audit/events): the row names the person (on_behalf_of) and their
   * address, its actor is the calling token. Like refusals, a flood writes a bounded number of rows: up to
   * DENIED_PER_MINUTE rows of their own per kind, actor, address and minute, the rest counted on that minute's
   * aggregate row (which names the first subject past the budget), never dropped. Throws when the write fails.
   */
  async recordSignInEvent(context: AdminRequestContext, event: SignInEvent, now = this.clock.now()): Promise<void> {
    const minute = Math.floor(now / 60_000);
    const action = SIGN_IN_EVENTS[event.kind];
    const budget = `${action}|${minute}|${context.actor.id ?? context.actor.name}|${event.address ?? '-'}`.slice(
      0,
      200,
    );
    const count = (this.denied.get(budget)?.count ?? 0) + 1;
    if (this.denied.size > 10_000) this.forgetOld(minute);
    this.denied.set(budget, { minute, count });
    const call: AdminRequestContext = {
      ...context,
      endUser: { onBehalfOf: event.subject, address: event.address },
    };
    const detail: AuditChanges = event.reason === null ? {} : { reason: { before: null, after: event.reason } };
    if (count <= DENIED_PER_MINUTE)
      await this.record(call, this.dataSource.manager, { action, changes: event.reason === null ? null : detail });
    else await this.countOnAggregate(budget, call, action, { minute: new Date(minute * 60_000), detail });
  }

  /**
   * Adds one refusal to the aggregate row `key` (an upsert: every instance adds to the same row). Refusals that
   * arrive while this instance's upsert is in flight are added by the next one, so a flood costs a write per
   * round trip, not per call.
   */
  private countOnAggregate(
    key: string,
    context: AdminRequestContext,
    action: string,
    first: { minute: Date; detail: AuditChanges },
  ): Promise<void> {
    const batch = this.aggregates.get(key);
    if (batch) {
      batch.count += 1;
      return batch.done;
    }
    const fresh = { count: 1, done: Promise.resolve() };
    this.aggregates.set(key, fresh);
    fresh.done = (async () => {
      try {
        while (fresh.count > 0) {
          const adding = fresh.count;
          fresh.count = 0;
          await this.upsertAggregate(key, context, action, first, adding);
        }
      } finally {
        this.aggregates.delete(key);
      }
    })();
    return fresh.done;
  }

  private async upsertAggregate(
    key: string,
    context: AdminRequestContext,
    action: string,
    first: { minute: Date; detail: AuditChanges },
    adding: number,
  ): Promise<void> {
    // The row keeps the first refusal's details; `minute` says which minute its count covers.
    const changes: AuditChanges = { minute: { before: null, after: first.minute.toISOString() }, ...first.detail };
    await this.dataSource.query(
      `INSERT INTO "${schemaOf(this.dataSource)}"."audit_log" ` +
        `("actor_id", "actor_name", "action", "changes", "source", "on_behalf_of", "end_user_address", "count", "aggregate_key") ` +
        `VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ` +
        `ON CONFLICT ("aggregate_key") DO UPDATE SET "count" = "audit_log"."count" + EXCLUDED."count"`,
      [
        context.actor.id,
        context.actor.name,
        action,
        JSON.stringify(changes),
        context.source,
        context.endUser?.onBehalfOf ?? null,
        context.endUser?.address ?? null,
        adding,
        key,
      ],
    );
  }

  async list(query: AuditQuery): Promise<{ items: AuditEntryEntity[]; next: string | null }> {
    const descending = query.order === 'desc';
    const builder = this.dataSource
      .getRepository(AuditEntryEntity)
      .createQueryBuilder('a')
      .addSelect('a.aggregateKey')
      .orderBy('a.id', descending ? 'DESC' : 'ASC')
      .take(query.limit + 1);
    if (query.from) builder.andWhere('a.at >= :from', { from: query.from });
    if (query.to) builder.andWhere('a.at < :to', { to: query.to });
    if (query.actor) builder.andWhere('(a.actor_name = :actor OR a.actor_id::text = :actor)', { actor: query.actor });
    if (query.action) builder.andWhere('a.action = :action', { action: query.action });
    if (query.target) {
      builder.andWhere(
        '(a.target_consumer = :target OR a.target_key::text = :target OR a.target_token::text = :target)',
        { target: query.target },
      );
    }
    // A restricted reader sees the rows about its consumers only: none about tokens, refusals or other consumers.
    const consumers = `"${schemaOf(this.dataSource)}"."consumers"`;
    if (query.about?.createdByToken !== undefined)
      builder.andWhere(`a.target_consumer IN (SELECT c.name FROM ${consumers} c WHERE c.created_by_token = :owner)`, {
        owner: query.about.createdByToken,
      });
    else if (query.about?.plans !== undefined)
      builder.andWhere(`a.target_consumer IN (SELECT c.name FROM ${consumers} c WHERE c.plan IN (:...plans))`, {
        plans: query.about.plans,
      });
    // Keyset paging: `after` is the last row of the previous page, so the next page continues in the same order.
    if (query.after) builder.andWhere(descending ? 'a.id < :after' : 'a.id > :after', { after: query.after });
    const rows = await builder.getMany();
    const items = rows.slice(0, query.limit);
    return { items, next: rows.length > query.limit ? items[items.length - 1].id : null };
  }

  /** Deletes rows older than AUDIT_RETENTION_DAYS, a batch at a time; the number deleted. */
  async prune(): Promise<number> {
    return deleteInBatches(
      this.dataSource,
      `"${schemaOf(this.dataSource)}"."audit_log"`,
      `"at" < now() - $1 * interval '1 day'`,
      [this.config.admin.auditRetentionDays],
    );
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.prune().catch((error: Error) => this.logger.warn(`Audit retention: ${error.message}`));
    }, RETENTION_EVERY_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private forgetOld(minute: number): void {
    for (const [source, seen] of this.denied) if (seen.minute !== minute) this.denied.delete(source);
  }
}
