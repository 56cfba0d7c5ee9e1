import { randomUUID } from 'node:crypto';
import { isUniqueViolation } from '@app/database';
import { ApiError } from '@app/errors';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { And, DataSource, EntityManager, In, IsNull, Like, MoreThan, MoreThanOrEqual } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { ApiKeyEntity } from './api-key.entity';
import { generateApiKey, hashApiKey, keyHint } from './api-key';
import { ConsumerChanges } from './consumer-changes';
import { ConsumerEntity } from './consumer.entity';
import { PlanLimits } from '../plans/plan-limits';
import { Limits, PlanName } from '../plans/plans';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { AdminActor, AdminRequestContext, assertMayTouch, assertPlanAllowed } from './admin-context';
import { AuditLog, diff } from './audit-log';

export interface ConsumerWithKeys {
  consumer: ConsumerEntity;
  keys: ApiKeyEntity[];
}

export interface IssuedKey {
  key: string;
  record: ApiKeyEntity;
}

export interface NewConsumer {
  name?: string;
  plan: PlanName;
  limits?: Limits;
  expiresAt?: Date;
}

/**
 * Consumers and keys in PostgreSQL: the admin commands, the one place (with the consumers-file import) that
 * writes them. Every change of a consumer runs in one transaction that first locks the consumer's row, so the
 * changes of one consumer happen one at a time, whichever instance makes them (a rotation racing a revoke-all
 * cannot leave a key behind). Every change is committed first, then published (ConsumerChanges), so that no
 * instance reloads a state older than the answer the caller gets. Plan rules are PlanLimits'.
 */
@Injectable()
export class ConsumerRepository {
  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    private readonly changes: ConsumerChanges,
    private readonly planLimits: PlanLimits,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly audit: AuditLog,
  ) {}

  async hasConsumers(): Promise<boolean> {
    return (await this.dataSource.getRepository(ConsumerEntity).count({ take: 1 })) > 0;
  }

  /** Creates a consumer and its first key together; a taken name is 409 `CONSUMER_EXISTS` (names are unique in the database). */
  async create(
    context: AdminRequestContext,
    input: NewConsumer,
  ): Promise<{ consumer: ConsumerEntity; issued: IssuedKey }> {
    this.planLimits.check(input.plan, input.limits ?? null);
    const { actor } = context;
    assertPlanAllowed(actor, input.plan);
    const name = input.name ?? `${input.plan}-${randomUUID().slice(0, 8)}`;
    try {
      const result = await this.dataSource.transaction(async (manager) => {
        const consumer = manager.create(ConsumerEntity, {
          id: randomUUID(),
          name,
          plan: input.plan,
          limitPerMinute: input.limits?.perMinute ?? null,
          limitPerDay: input.limits?.perDay ?? null,
          disabledAt: null,
          createdByToken: actor.id,
        });
        await manager.insert(ConsumerEntity, consumer);
        const issued = await this.insertKey(manager, consumer.id, input.expiresAt ?? null);
        await this.audit.record(context, manager, {
          action: 'consumer.create',
          targetConsumer: name,
          targetKey: issued.record.id,
          changes: diff({}, { plan: input.plan, limits: input.limits ?? null, keyExpiresAt: input.expiresAt ?? null }),
        });
        return { consumer: await manager.findOneByOrFail(ConsumerEntity, { id: consumer.id }), issued };
      });
      await this.changes.publish({ keyHashes: [result.issued.record.keyHash], consumerIds: [result.consumer.id] });
      return result;
    } catch (error) {
      if (isUniqueViolation(error, 'UQ_consumers_name'))
        throw new ApiError('CONSUMER_EXISTS', `A consumer named "${name}" already exists.`);
      throw error;
    }
  }

  /** One page in name order (keyset pagination: as fast on page 10,000 as on page 1), with each one's keys. */
  async list(
    actor: AdminActor,
    limit: number,
    after?: string,
    prefix?: string,
  ): Promise<{ items: ConsumerWithKeys[]; next: string | null }> {
    // A name holds no % and "_" is escaped: the prefix matches literally. LIKE alone cannot use the name index
    // unless the column's collation is "C" (C.UTF-8 is not): a search read every consumer. Bounded below by the
    // prefix (a name that starts with it sorts at or after it), the index scan starts there and stops at the page.
    const conditions = [
      ...(after === undefined ? [] : [MoreThan(after)]),
      ...(prefix === undefined
        ? []
        : [MoreThanOrEqual(prefix), Like(`${prefix.replace(/[\\_%]/g, (c) => `\\${c}`)}%`)]),
    ];
    const name = conditions.length === 0 ? undefined : conditions.length === 1 ? conditions[0] : And(...conditions);
    const consumers = await this.dataSource.getRepository(ConsumerEntity).find({
      where: {
        ...(name === undefined ? {} : { name }),
        ...(actor.ownConsumersOnly ? { createdByToken: actor.id ?? IsNull() } : {}),
        ...(actor.plans !== null && !actor.ownConsumersOnly ? { plan: In([...actor.plans]) } : {}),
      },
      order: { name: 'ASC' },
      take: limit + 1,
    });
    const page = consumers.slice(0, limit);
    const keys = page.length
      ? await this.dataSource
          .getRepository(ApiKeyEntity)
          .find({ where: { consumerId: In(page.map((c) => c.id)) }, order: { createdAt: 'ASC' } })
      : [];
    return {
      items: page.map((consumer) => ({ consumer, keys: keys.filter((k) => k.consumerId === consumer.id) })),
      next: consumers.length > limit ? page[page.length - 1].name : null,
    };
  }

  async get(actor: AdminActor, name: string): Promise<ConsumerWithKeys> {
    const consumer = await this.consumerNamed(this.dataSource.manager, name);
    assertMayTouch(actor, consumer);
    const keys = await this.dataSource
      .getRepository(ApiKeyEntity)
      .find({ where: { consumerId: consumer.id }, order: { createdAt: 'ASC' } });
    return { consumer, keys };
  }

  /**
   * Changes the plan and/or the consumer's own limits (`null` clears them: back to the plan's). `alongside` runs
   * first in the same transaction, under the consumer's lock (a plan request's approval: both commit or neither).
   */
  async update(
    context: AdminRequestContext,
    name: string,
    patch: { plan?: PlanName; limits?: Limits | null },
    alongside?: (manager: EntityManager, consumer: ConsumerEntity) => Promise<void>,
  ): Promise<ConsumerWithKeys> {
    const consumer = await this.changeConsumer(context.actor, name, async (manager, current) => {
      if (alongside) await alongside(manager, current);
      const plan = patch.plan ?? current.plan;
      const limits = patch.limits === undefined ? limitsOf(current) : patch.limits;
      this.planLimits.check(plan, limits);
      assertPlanAllowed(context.actor, plan);
      await manager.update(
        ConsumerEntity,
        { id: current.id },
        { plan, limitPerMinute: limits?.perMinute ?? null, limitPerDay: limits?.perDay ?? null },
      );
      const changes = diff({ plan: current.plan, limits: limitsOf(current) }, { plan, limits });
      if (Object.keys(changes).length > 0)
        await this.audit.record(context, manager, { action: 'consumer.update', targetConsumer: name, changes });
      return current;
    });
    await this.changes.publish({ keyHashes: [], consumerIds: [consumer.id] });
    return this.get(context.actor, name);
  }

  /**
   * Sets the consumer's billing anchor and/or its own monthly quota (`null` clears either: its creation time, its
   * plan's quota), audited as `consumer.billing`. The counters are not touched: what a move does to the period in
   * progress is the rate-limit store's rule (docs/billing.md).
   */
  async setBilling(
    context: AdminRequestContext,
    name: string,
    patch: { billingAnchor?: Date | null; perMonth?: number | null },
  ): Promise<ConsumerEntity> {
    const changed = await this.changeConsumer(context.actor, name, async (manager, current) => {
      const billingAnchor = patch.billingAnchor === undefined ? current.billingAnchor : patch.billingAnchor;
      const limitPerMonth = patch.perMonth === undefined ? current.limitPerMonth : patch.perMonth;
      const changes = diff(
        { billingAnchor: current.billingAnchor, perMonth: current.limitPerMonth },
        { billingAnchor, perMonth: limitPerMonth },
      );
      if (Object.keys(changes).length === 0) return undefined;
      await manager.update(ConsumerEntity, { id: current.id }, { billingAnchor, limitPerMonth });
      await this.audit.record(context, manager, { action: 'consumer.billing', targetConsumer: name, changes });
      return current;
    });
    if (changed) await this.changes.publish({ keyHashes: [], consumerIds: [changed.id] });
    return (await this.get(context.actor, name)).consumer;
  }

  /** Disables (every key refused) or enables a consumer; its keys are kept. */
  async setDisabled(context: AdminRequestContext, name: string, disabled: boolean): Promise<ConsumerWithKeys> {
    const changed = await this.changeConsumer(context.actor, name, async (manager, consumer) => {
      if ((consumer.disabledAt !== null) === disabled) return undefined;
      await manager.update(ConsumerEntity, { id: consumer.id }, { disabledAt: disabled ? () => 'now()' : null });
      await this.audit.record(context, manager, {
        action: disabled ? 'consumer.disable' : 'consumer.enable',
        targetConsumer: name,
        changes: diff({ disabled: !disabled }, { disabled }),
      });
      return consumer;
    });
    if (changed) await this.changes.publish({ keyHashes: [], consumerIds: [changed.id] });
    return this.get(context.actor, name);
  }

  /** Another key for the consumer (the others keep working), within the cap on active keys. */
  async issueKey(context: AdminRequestContext, name: string, expiresAt?: Date): Promise<IssuedKey> {
    const issued = await this.changeConsumer(context.actor, name, async (manager, consumer) => {
      await this.assertRoomForKeys(manager, consumer, 1);
      const issued = await this.insertKey(manager, consumer.id, expiresAt ?? null);
      await this.audit.record(context, manager, {
        action: 'key.issue',
        targetConsumer: name,
        targetKey: issued.record.id,
        changes: diff({}, { hint: issued.record.hint, expiresAt: issued.record.expiresAt }),
      });
      return issued;
    });
    await this.changes.publish({ keyHashes: [issued.record.keyHash], consumerIds: [] });
    return issued;
  }

  /** Revokes one key (by id) or, without an id, every key of the consumer still unrevoked. Idempotent. */
  async revoke(context: AdminRequestContext, name: string, keyId?: string): Promise<ApiKeyEntity[]> {
    const revoked = await this.changeConsumer(context.actor, name, async (manager, consumer) => {
      if (keyId !== undefined) await this.keyOf(manager, consumer, keyId);
      const where =
        keyId === undefined
          ? { consumerId: consumer.id, revokedAt: IsNull() }
          : { id: keyId, consumerId: consumer.id, revokedAt: IsNull() };
      const targets = await manager.find(ApiKeyEntity, { where });
      if (targets.length === 0) return [];
      await manager.update(ApiKeyEntity, { id: In(targets.map((k) => k.id)) }, { revokedAt: () => 'now()' });
      const done = await manager.find(ApiKeyEntity, {
        where: { id: In(targets.map((k) => k.id)) },
        order: { createdAt: 'ASC' },
      });
      for (const key of done)
        await this.audit.record(context, manager, {
          action: 'key.revoke',
          targetConsumer: name,
          targetKey: key.id,
          changes: diff({ revokedAt: null }, { revokedAt: key.revokedAt }),
        });
      return done;
    });
    if (revoked.length > 0) await this.changes.publish({ keyHashes: revoked.map((k) => k.keyHash), consumerIds: [] });
    return revoked;
  }

  /**
   * Rotation: a new key now; the old one keeps working for `overlapMs` (never longer than it would have), so
   * that clients can be moved over without downtime. The old key must be usable still, and is rotated once:
   * it names its successor, and a second rotation of it (a concurrent one included) is refused.
   */
  async rotate(
    context: AdminRequestContext,
    name: string,
    keyId: string,
    overlapMs: number,
  ): Promise<{ issued: IssuedKey; previous: ApiKeyEntity }> {
    const result = await this.changeConsumer(context.actor, name, async (manager, consumer) => {
      const old = await this.keyOf(manager, consumer, keyId);
      if (old.revokedAt !== null)
        throw new ApiError('KEY_REVOKED', `Key ${keyId} is revoked: issue a new key instead.`);
      if (old.replacedBy !== null) {
        throw new ApiError(
          'KEY_ALREADY_ROTATED',
          `Key ${keyId} was already rotated: its successor is key ${old.replacedBy} (rotate that one instead).`,
        );
      }
      if (old.expiresAt !== null && old.expiresAt.getTime() <= Date.now())
        throw new ApiError('KEY_EXPIRED', `Key ${keyId} has expired: issue a new key instead.`);
      await manager.query(
        `UPDATE "${this.schema}"."api_keys" SET "expires_at" = LEAST(COALESCE("expires_at", 'infinity'), now() + $2 * interval '1 millisecond') WHERE "id" = $1`,
        [old.id, overlapMs],
      );
      // Counted after the old key's new expiry: without an overlap it stops now, and the new key takes its place.
      await this.assertRoomForKeys(manager, consumer, 1);
      const issued = await this.insertKey(manager, consumer.id, old.expiresAt);
      await manager.update(ApiKeyEntity, { id: old.id }, { replacedBy: issued.record.id });
      const previous = await manager.findOneByOrFail(ApiKeyEntity, { id: old.id });
      await this.audit.record(context, manager, {
        action: 'key.rotate',
        targetConsumer: name,
        targetKey: old.id,
        changes: diff(
          { expiresAt: old.expiresAt, replacedBy: null },
          { expiresAt: previous.expiresAt, replacedBy: issued.record.id },
        ),
      });
      return { issued, previous };
    });
    await this.changes.publish({ keyHashes: [result.previous.keyHash, result.issued.record.keyHash], consumerIds: [] });
    return result;
  }

  /**
   * Runs `change` in one transaction that first locks the consumer's row (SELECT ... FOR UPDATE): every change
   * of one consumer waits for the one before it, in every instance sharing the database. 404 when it is unknown,
   * 403 when the actor may not touch it.
   */
  private changeConsumer<T>(
    actor: AdminActor,
    name: string,
    change: (manager: EntityManager, consumer: ConsumerEntity) => Promise<T>,
  ): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      const consumer = await this.consumerNamed(manager, name, true);
      assertMayTouch(actor, consumer);
      return change(manager, consumer);
    });
  }

  /**
   * Refuses (409 `KEY_LIMIT_REACHED`) a change that would leave the consumer more than CONSUMER_MAX_KEYS active keys (neither revoked
   * nor expired) once `adding` more are added. Run under the consumer's lock, so that concurrent issues cannot pass it.
   */
  async assertRoomForKeys(manager: EntityManager, consumer: ConsumerEntity, adding: number): Promise<void> {
    const active = await manager
      .createQueryBuilder(ApiKeyEntity, 'key')
      .where('key.consumer_id = :id', { id: consumer.id })
      .andWhere('key.revoked_at IS NULL')
      .andWhere('(key.expires_at IS NULL OR key.expires_at > now())')
      .getCount();
    const max = this.config.consumers.maxKeys;
    if (active + adding > max) {
      throw new ApiError(
        'KEY_LIMIT_REACHED',
        `A consumer holds at most ${max} active keys (CONSUMER_MAX_KEYS): "${consumer.name}" has ${active}; revoke some first.`,
      );
    }
  }

  private get schema(): string {
    return (this.dataSource.options as { schema?: string }).schema ?? 'public';
  }

  private async insertKey(manager: EntityManager, consumerId: string, expiresAt: Date | null): Promise<IssuedKey> {
    const key = generateApiKey();
    const record = manager.create(ApiKeyEntity, {
      id: randomUUID(),
      consumerId,
      keyHash: hashApiKey(key),
      hint: keyHint(key),
      expiresAt,
      revokedAt: null,
      replacedBy: null,
    });
    await manager.insert(ApiKeyEntity, record);
    return { key, record: await manager.findOneByOrFail(ApiKeyEntity, { id: record.id }) };
  }

  private async consumerNamed(manager: EntityManager, name: string, lock = false): Promise<ConsumerEntity> {
    const consumer = await manager.findOne(ConsumerEntity, {
      where: { name },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!consumer) throw new ApiError('NOT_FOUND', `No consumer named "${name}".`);
    return consumer;
  }

  private async keyOf(manager: EntityManager, consumer: ConsumerEntity, keyId: string): Promise<ApiKeyEntity> {
    const key = await manager.findOne(ApiKeyEntity, { where: { id: keyId, consumerId: consumer.id } });
    if (!key) throw new ApiError('NOT_FOUND', `Consumer "${consumer.name}" has no key ${keyId}.`);
    return key;
  }
}

export function limitsOf(consumer: ConsumerEntity): Limits | null {
  return consumer.limitPerMinute !== null && consumer.limitPerDay !== null
    ? { perMinute: consumer.limitPerMinute, perDay: consumer.limitPerDay }
    : null;
}
