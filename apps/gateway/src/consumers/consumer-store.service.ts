import { randomUUID } from 'node:crypto';
import { ApiError } from '@app/errors';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, IsNull, MoreThan } from 'typeorm';
import { ApiKeyEntity } from './api-key.entity';
import { generateApiKey, hashApiKey, keyHint } from './api-key';
import { ConsumerChanges } from './consumer-changes';
import { ConsumerEntity } from './consumer.entity';
import { Limits, PlanName, PlanTable } from './plans';

export const PLAN_TABLE = Symbol('PLAN_TABLE');
/** The gateway's TypeORM data source has a name: in one process with the pets service (tests), they must not clash. */
export const GATEWAY_DATA_SOURCE = 'gateway';

/** What the data plane needs of a key, read by its hash in one indexed query. */
export interface KeyRecord {
  keyId: string;
  consumerId: string;
  name: string;
  plan: PlanName;
  limits: Limits | null;
  disabledAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

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

/** A consumer as the consumers-file format (`keys import/export`) writes it: hashes only. */
export interface FileConsumer {
  name: string;
  plan: PlanName;
  keyHash: string;
  keyHint: string;
  createdAt: string;
  revokedAt?: string;
  limits?: Limits;
  keys?: Array<{ keyHash: string; keyHint: string; createdAt: string; expiresAt?: string; revokedAt?: string }>;
}

export interface ImportResult {
  created: number;
  updated: number;
  unchanged: number;
}

const UNIQUE_VIOLATION = '23505';

function isUniqueViolation(error: unknown, constraint: string): boolean {
  const driverError = (error as { driverError?: { code?: string; constraint?: string } }).driverError;
  return driverError?.code === UNIQUE_VIOLATION && driverError.constraint === constraint;
}

/**
 * Consumers and keys in PostgreSQL: the one place that writes them. Every change is committed first, then
 * published (ConsumerChanges), so that no instance reloads a state older than the answer the caller gets.
 * Plan rules live here, once, for the admin API and the import alike.
 */
@Injectable()
export class ConsumerStore {
  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    private readonly changes: ConsumerChanges,
    @Inject(PLAN_TABLE) private readonly plans: PlanTable,
  ) {}

  /**
   * The data plane's query: a key and its consumer by the key's hash (unique index), or null. Plain SQL: it runs
   * on every cache miss, and TypeORM's query building and hydration would cost more than the query.
   */
  async findByKeyHash(keyHash: string): Promise<KeyRecord | null> {
    const rows: Array<{
      key_id: string;
      consumer_id: string;
      name: string;
      plan: PlanName;
      limit_per_minute: number | null;
      limit_per_day: number | null;
      disabled_at: Date | null;
      expires_at: Date | null;
      revoked_at: Date | null;
    }> = await this.dataSource.query(
      `SELECT k.id AS key_id, c.id AS consumer_id, c.name, c.plan, c.limit_per_minute, c.limit_per_day, c.disabled_at, k.expires_at, k.revoked_at ` +
        `FROM "${this.schema}"."api_keys" k JOIN "${this.schema}"."consumers" c ON c.id = k.consumer_id WHERE k.key_hash = $1`,
      [keyHash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      keyId: row.key_id,
      consumerId: row.consumer_id,
      name: row.name,
      plan: row.plan,
      limits: row.limit_per_minute !== null && row.limit_per_day !== null ? { perMinute: row.limit_per_minute, perDay: row.limit_per_day } : null,
      disabledAt: row.disabled_at,
      expiresAt: row.expires_at,
      revokedAt: row.revoked_at,
    };
  }

  /** The limits a consumer is held to: its own, else its plan's; undefined when neither exists. */
  effectiveLimits(consumer: { plan: PlanName; limits: Limits | null }): Limits | undefined {
    const plan = this.plans[consumer.plan];
    return consumer.limits ?? (plan === 'custom' ? undefined : plan);
  }

  async hasConsumers(): Promise<boolean> {
    return (await this.dataSource.getRepository(ConsumerEntity).count({ take: 1 })) > 0;
  }

  /** Creates a consumer and its first key together; a taken name is a 400 (names are unique in the database). */
  async create(input: NewConsumer): Promise<{ consumer: ConsumerEntity; issued: IssuedKey }> {
    this.checkPlan(input.plan, input.limits ?? null);
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
        });
        await manager.insert(ConsumerEntity, consumer);
        const issued = await this.insertKey(manager, consumer.id, input.expiresAt ?? null);
        return { consumer: await manager.findOneByOrFail(ConsumerEntity, { id: consumer.id }), issued };
      });
      await this.changes.publish({ keyHashes: [result.issued.record.keyHash], consumerIds: [result.consumer.id] });
      return result;
    } catch (error) {
      if (isUniqueViolation(error, 'UQ_consumers_name')) throw new ApiError('VALIDATION_FAILED', `A consumer named "${name}" already exists.`);
      throw error;
    }
  }

  /** One page in name order (keyset pagination: as fast on page 10,000 as on page 1), with each one's keys. */
  async list(limit: number, after?: string): Promise<{ items: ConsumerWithKeys[]; next: string | null }> {
    const consumers = await this.dataSource.getRepository(ConsumerEntity).find({
      where: after === undefined ? {} : { name: MoreThan(after) },
      order: { name: 'ASC' },
      take: limit + 1,
    });
    const page = consumers.slice(0, limit);
    const keys = page.length
      ? await this.dataSource.getRepository(ApiKeyEntity).find({ where: { consumerId: In(page.map((c) => c.id)) }, order: { createdAt: 'ASC' } })
      : [];
    return {
      items: page.map((consumer) => ({ consumer, keys: keys.filter((k) => k.consumerId === consumer.id) })),
      next: consumers.length > limit ? page[page.length - 1].name : null,
    };
  }

  async get(name: string): Promise<ConsumerWithKeys> {
    const consumer = await this.consumerNamed(this.dataSource.manager, name);
    const keys = await this.dataSource.getRepository(ApiKeyEntity).find({ where: { consumerId: consumer.id }, order: { createdAt: 'ASC' } });
    return { consumer, keys };
  }

  /** Changes the plan and/or the consumer's own limits (`null` clears them: back to the plan's). */
  async update(name: string, patch: { plan?: PlanName; limits?: Limits | null }): Promise<ConsumerWithKeys> {
    const consumer = await this.dataSource.transaction(async (manager) => {
      const current = await this.consumerNamed(manager, name, true);
      const plan = patch.plan ?? current.plan;
      const limits = patch.limits === undefined ? limitsOf(current) : patch.limits;
      this.checkPlan(plan, limits);
      await manager.update(ConsumerEntity, { id: current.id }, { plan, limitPerMinute: limits?.perMinute ?? null, limitPerDay: limits?.perDay ?? null });
      return current;
    });
    await this.changes.publish({ keyHashes: [], consumerIds: [consumer.id] });
    return this.get(name);
  }

  /** Disables (every key refused) or enables a consumer; its keys are kept. */
  async setDisabled(name: string, disabled: boolean): Promise<ConsumerWithKeys> {
    const consumer = await this.consumerNamed(this.dataSource.manager, name);
    if ((consumer.disabledAt !== null) !== disabled) {
      await this.dataSource.getRepository(ConsumerEntity).update({ id: consumer.id }, { disabledAt: disabled ? () => 'now()' : null });
      await this.changes.publish({ keyHashes: [], consumerIds: [consumer.id] });
    }
    return this.get(name);
  }

  async issueKey(name: string, expiresAt?: Date): Promise<IssuedKey> {
    const consumer = await this.consumerNamed(this.dataSource.manager, name);
    const issued = await this.insertKey(this.dataSource.manager, consumer.id, expiresAt ?? null);
    await this.changes.publish({ keyHashes: [issued.record.keyHash], consumerIds: [] });
    return issued;
  }

  /** Revokes one key (by id) or, without an id, every key of the consumer still unrevoked. Idempotent. */
  async revoke(name: string, keyId?: string): Promise<ApiKeyEntity[]> {
    const consumer = await this.consumerNamed(this.dataSource.manager, name);
    const repository = this.dataSource.getRepository(ApiKeyEntity);
    if (keyId !== undefined) await this.keyOf(consumer, keyId);
    const where = keyId === undefined ? { consumerId: consumer.id, revokedAt: IsNull() } : { id: keyId, consumerId: consumer.id, revokedAt: IsNull() };
    const targets = await repository.find({ where });
    if (targets.length === 0) return [];
    await repository.update({ id: In(targets.map((k) => k.id)) }, { revokedAt: () => 'now()' });
    await this.changes.publish({ keyHashes: targets.map((k) => k.keyHash), consumerIds: [] });
    return repository.find({ where: { id: In(targets.map((k) => k.id)) } });
  }

  /**
   * Rotation: a new key now; the old one keeps working for `overlapMs` (never longer than it would have), so
   * that clients can be moved over without downtime. The old key must be usable still.
   */
  async rotate(name: string, keyId: string, overlapMs: number): Promise<{ issued: IssuedKey; previous: ApiKeyEntity }> {
    const consumer = await this.consumerNamed(this.dataSource.manager, name);
    const result = await this.dataSource.transaction(async (manager) => {
      const old = await manager.findOne(ApiKeyEntity, { where: { id: keyId, consumerId: consumer.id }, lock: { mode: 'pessimistic_write' } });
      if (!old) throw new ApiError('NOT_FOUND', `Consumer "${name}" has no key ${keyId}.`);
      if (old.revokedAt !== null) throw new ApiError('VALIDATION_FAILED', `Key ${keyId} is revoked: issue a new key instead.`);
      if (old.expiresAt !== null && old.expiresAt.getTime() <= Date.now()) throw new ApiError('VALIDATION_FAILED', `Key ${keyId} has expired: issue a new key instead.`);
      await manager.query(
        `UPDATE "${this.schema}"."api_keys" SET "expires_at" = LEAST(COALESCE("expires_at", 'infinity'), now() + $2 * interval '1 millisecond') WHERE "id" = $1`,
        [old.id, overlapMs],
      );
      const issued = await this.insertKey(manager, consumer.id, old.expiresAt);
      return { issued, previous: await manager.findOneByOrFail(ApiKeyEntity, { id: old.id }) };
    });
    await this.changes.publish({ keyHashes: [result.previous.keyHash, result.issued.record.keyHash], consumerIds: [] });
    return result;
  }

  /**
   * Imports consumers in the consumers-file format, idempotently: a consumer is matched by name (created, or
   * its plan and limits brought in line), a key by hash (added, or revoked when the file says so). Importing
   * the same file twice changes nothing the second time. A hash held by another consumer is refused.
   */
  async import(consumers: FileConsumer[]): Promise<ImportResult> {
    for (const c of consumers) this.checkPlan(c.plan, c.limits ?? null);
    const result: ImportResult = { created: 0, updated: 0, unchanged: 0 };
    const touched: string[] = [];
    await this.dataSource.transaction(async (manager) => {
      for (const input of consumers) {
        let consumer = await manager.findOne(ConsumerEntity, { where: { name: input.name }, lock: { mode: 'pessimistic_write' } });
        let changed = false;
        let created = false;
        const limits = input.limits ?? null;
        if (!consumer) {
          consumer = manager.create(ConsumerEntity, {
            id: randomUUID(),
            name: input.name,
            plan: input.plan,
            limitPerMinute: limits?.perMinute ?? null,
            limitPerDay: limits?.perDay ?? null,
            disabledAt: null,
            createdAt: new Date(input.createdAt),
          });
          await manager.insert(ConsumerEntity, consumer);
          created = true;
        } else if (consumer.plan !== input.plan || !sameLimits(limitsOf(consumer), limits)) {
          await manager.update(ConsumerEntity, { id: consumer.id }, { plan: input.plan, limitPerMinute: limits?.perMinute ?? null, limitPerDay: limits?.perDay ?? null });
          changed = true;
        }
        const keys = input.keys ?? [{ keyHash: input.keyHash, keyHint: input.keyHint, createdAt: input.createdAt, revokedAt: input.revokedAt }];
        for (const k of keys) {
          const existing = await manager.findOne(ApiKeyEntity, { where: { keyHash: k.keyHash } });
          if (existing && existing.consumerId !== consumer.id) {
            throw new ApiError('VALIDATION_FAILED', `Key ${k.keyHint} of "${input.name}" belongs to another consumer.`);
          }
          if (!existing) {
            await manager.insert(ApiKeyEntity, {
              id: randomUUID(),
              consumerId: consumer.id,
              keyHash: k.keyHash,
              hint: k.keyHint.slice(0, 16),
              createdAt: new Date(k.createdAt),
              expiresAt: k.expiresAt ? new Date(k.expiresAt) : null,
              revokedAt: k.revokedAt ? new Date(k.revokedAt) : null,
            });
            changed = true;
          } else if (k.revokedAt && existing.revokedAt === null) {
            await manager.update(ApiKeyEntity, { id: existing.id }, { revokedAt: new Date(k.revokedAt) });
            changed = true;
          }
          touched.push(k.keyHash);
        }
        if (created) result.created += 1;
        else if (changed) result.updated += 1;
        else result.unchanged += 1;
      }
    });
    await this.changes.publish({ keyHashes: touched, consumerIds: [] });
    return result;
  }

  /** One page of the consumers-file format (hashes only), in name order. */
  async export(limit: number, after?: string): Promise<{ consumers: FileConsumer[]; next: string | null }> {
    const page = await this.list(limit, after);
    const consumers = page.items.map(({ consumer, keys }) => {
      const current = [...keys].reverse().find((k) => k.revokedAt === null) ?? keys[keys.length - 1];
      const limits = limitsOf(consumer);
      return {
        name: consumer.name,
        plan: consumer.plan,
        keyHash: current?.keyHash ?? '',
        keyHint: current?.hint ?? '',
        createdAt: consumer.createdAt.toISOString(),
        ...(current?.revokedAt ? { revokedAt: current.revokedAt.toISOString() } : {}),
        ...(limits ? { limits } : {}),
        keys: keys.map((k) => ({
          keyHash: k.keyHash,
          keyHint: k.hint,
          createdAt: k.createdAt.toISOString(),
          ...(k.expiresAt ? { expiresAt: k.expiresAt.toISOString() } : {}),
          ...(k.revokedAt ? { revokedAt: k.revokedAt.toISOString() } : {}),
        })),
      };
    });
    return { consumers, next: page.next };
  }

  private get schema(): string {
    return (this.dataSource.options as { schema?: string }).schema ?? 'public';
  }

  private checkPlan(plan: PlanName, limits: Limits | null): void {
    if (this.plans[plan] === 'custom' && limits === null) {
      throw new ApiError('VALIDATION_FAILED', `The ${plan} plan needs the consumer's agreed limits (perMinute and perDay).`);
    }
  }

  private async insertKey(manager: EntityManager, consumerId: string, expiresAt: Date | null): Promise<IssuedKey> {
    const key = generateApiKey();
    const record = manager.create(ApiKeyEntity, { id: randomUUID(), consumerId, keyHash: hashApiKey(key), hint: keyHint(key), expiresAt, revokedAt: null });
    await manager.insert(ApiKeyEntity, record);
    return { key, record: await manager.findOneByOrFail(ApiKeyEntity, { id: record.id }) };
  }

  private async consumerNamed(manager: EntityManager, name: string, lock = false): Promise<ConsumerEntity> {
    const consumer = await manager.findOne(ConsumerEntity, { where: { name }, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}) });
    if (!consumer) throw new ApiError('NOT_FOUND', `No consumer named "${name}".`);
    return consumer;
  }

  private async keyOf(consumer: ConsumerEntity, keyId: string): Promise<ApiKeyEntity> {
    const key = await this.dataSource.getRepository(ApiKeyEntity).findOne({ where: { id: keyId, consumerId: consumer.id } });
    if (!key) throw new ApiError('NOT_FOUND', `Consumer "${consumer.name}" has no key ${keyId}.`);
    return key;
  }
}

export function limitsOf(consumer: ConsumerEntity): Limits | null {
  return consumer.limitPerMinute !== null && consumer.limitPerDay !== null ? { perMinute: consumer.limitPerMinute, perDay: consumer.limitPerDay } : null;
}

function sameLimits(a: Limits | null, b: Limits | null): boolean {
  return a === b || (a !== null && b !== null && a.perMinute === b.perMinute && a.perDay === b.perDay);
}
