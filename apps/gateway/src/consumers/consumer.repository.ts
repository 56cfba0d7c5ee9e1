import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { And, DataSource, EntityManager, FindOperator, In, IsNull, Like, MoreThan, MoreThanOrEqual } from 'typeorm';
import { GATEWAY_DATA_SOURCE, schemaOf } from '../database/data-source.options';
import { ApiKeyEntity } from './api-key.entity';
import { ConsumerEntity } from './consumer.entity';

export interface ConsumerWithKeys {
  consumer: ConsumerEntity;
  keys: ApiKeyEntity[];
}

/** Which consumers one page of the list holds (the services turn the caller's restrictions into it). */
export interface ConsumerPageQuery {
  limit: number;
  /** The last name of the previous page. */
  after?: string;
  /** Names that start with it (matched literally). */
  prefix?: string;
  /** Only the consumers with this contact email (lower-cased, as stored). */
  email?: string;
  /** Only the consumers this token created (`null`: the ones created by the root token or at start-up). */
  createdByToken?: string | null;
  /** Only consumers on these plans. */
  plans?: readonly string[];
}

/**
 * Consumers and their keys in PostgreSQL, SQL only: no rule, no authorisation, no audit, no publishing (the
 * application services, ConsumersService and ConsumerKeysService, do those). Writes take the transaction's
 * `manager`, so that a use case's writes and its audit row commit together.
 */
@Injectable()
export class ConsumerRepository {
  constructor(@InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource) {}

  async hasConsumers(): Promise<boolean> {
    return (await this.dataSource.getRepository(ConsumerEntity).count({ take: 1 })) > 0;
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /**
   * Runs `work` in one transaction that first locks the consumer's row (SELECT ... FOR UPDATE): every change of
   * one consumer waits for the one before it, in every instance sharing the database. `null` when it is unknown.
   */
  withLockedConsumer<T>(
    name: string,
    work: (manager: EntityManager, consumer: ConsumerEntity | null) => Promise<T>,
  ): Promise<T> {
    return this.dataSource.transaction(async (manager) =>
      work(manager, await manager.findOne(ConsumerEntity, { where: { name }, lock: { mode: 'pessimistic_write' } })),
    );
  }

  findByName(name: string): Promise<ConsumerEntity | null> {
    return this.dataSource.manager.findOne(ConsumerEntity, { where: { name } });
  }

  /** One page in name order (keyset pagination: as fast on page 10,000 as on page 1), with each one's keys. */
  async page(query: ConsumerPageQuery): Promise<{ items: ConsumerWithKeys[]; next: string | null }> {
    const { limit, after, prefix } = query;
    // A name holds no % and "_" is escaped: the prefix matches literally. LIKE alone cannot use the name index
    // unless the column's collation is "C" (C.UTF-8 is not): a search read every consumer. Bounded below by the
    // prefix (a name that starts with it sorts at or after it), the index scan starts there and stops at the page.
    const conditions: FindOperator<string>[] = [
      ...(after === undefined ? [] : [MoreThan(after)]),
      ...(prefix === undefined
        ? []
        : [MoreThanOrEqual(prefix), Like(`${prefix.replace(/[\\_%]/g, (c) => `\\${c}`)}%`)]),
    ];
    const name = conditions.length === 0 ? undefined : conditions.length === 1 ? conditions[0] : And(...conditions);
    const consumers = await this.dataSource.getRepository(ConsumerEntity).find({
      where: {
        ...(name === undefined ? {} : { name }),
        ...(query.email === undefined ? {} : { email: query.email }),
        ...(query.createdByToken === undefined ? {} : { createdByToken: query.createdByToken ?? IsNull() }),
        ...(query.plans === undefined ? {} : { plan: In([...query.plans]) }),
      },
      order: { name: 'ASC' },
      take: limit + 1,
    });
    const page = consumers.slice(0, limit);
    const keys = page.length ? await this.keysOf(page.map((c) => c.id)) : [];
    return {
      items: page.map((consumer) => ({ consumer, keys: keys.filter((k) => k.consumerId === consumer.id) })),
      next: consumers.length > limit ? page[page.length - 1].name : null,
    };
  }

  /** The keys of these consumers, oldest first. */
  keysOf(consumerIds: string[]): Promise<ApiKeyEntity[]> {
    return this.dataSource
      .getRepository(ApiKeyEntity)
      .find({ where: { consumerId: In(consumerIds) }, order: { createdAt: 'ASC' } });
  }

  async insertConsumer(manager: EntityManager, fields: Omit<ConsumerEntity, 'createdAt' | 'updatedAt'>) {
    await manager.insert(ConsumerEntity, manager.create(ConsumerEntity, fields));
    return manager.findOneByOrFail(ConsumerEntity, { id: fields.id });
  }

  async updateConsumer(
    manager: EntityManager,
    id: string,
    fields: Partial<
      Pick<
        ConsumerEntity,
        | 'plan'
        | 'limitPerMinute'
        | 'limitPerDay'
        | 'billingAnchor'
        | 'recutPeriodStart'
        | 'recutPeriodEnd'
        | 'limitPerMonth'
        | 'email'
        | 'allowedAddresses'
        | 'creditsEnabled'
        | 'creditRefill'
        | 'creditCosts'
        | 'alertThresholds'
      >
    >,
  ): Promise<void> {
    await manager.update(ConsumerEntity, { id }, fields);
  }

  /** Disabled from the database's now(), or enabled again. */
  async setDisabled(manager: EntityManager, id: string, disabled: boolean): Promise<void> {
    await manager.update(ConsumerEntity, { id }, { disabledAt: disabled ? () => 'now()' : null });
  }

  async insertKey(manager: EntityManager, fields: Omit<ApiKeyEntity, 'createdAt' | 'consumer'>): Promise<ApiKeyEntity> {
    await manager.insert(ApiKeyEntity, manager.create(ApiKeyEntity, fields));
    return manager.findOneByOrFail(ApiKeyEntity, { id: fields.id });
  }

  async setKeyAllowedAddresses(
    manager: EntityManager,
    id: string,
    allowedAddresses: string[] | null,
  ): Promise<ApiKeyEntity> {
    await manager.update(ApiKeyEntity, { id }, { allowedAddresses });
    return manager.findOneByOrFail(ApiKeyEntity, { id });
  }

  findKey(manager: EntityManager, consumerId: string, keyId: string): Promise<ApiKeyEntity | null> {
    return manager.findOne(ApiKeyEntity, { where: { id: keyId, consumerId } });
  }

  /** Keys neither revoked nor expired (by the database's clock). */
  countActiveKeys(manager: EntityManager, consumerId: string): Promise<number> {
    return manager
      .createQueryBuilder(ApiKeyEntity, 'key')
      .where('key.consumer_id = :id', { id: consumerId })
      .andWhere('key.revoked_at IS NULL')
      .andWhere('(key.expires_at IS NULL OR key.expires_at > now())')
      .getCount();
  }

  /** The consumer's unrevoked keys: all of them, or the one with this id. */
  unrevokedKeys(manager: EntityManager, consumerId: string, keyId?: string): Promise<ApiKeyEntity[]> {
    const where =
      keyId === undefined ? { consumerId, revokedAt: IsNull() } : { id: keyId, consumerId, revokedAt: IsNull() };
    return manager.find(ApiKeyEntity, { where });
  }

  /** Revokes these keys now (the database's clock) and returns them as stored, oldest first. */
  async revokeKeys(manager: EntityManager, ids: string[]): Promise<ApiKeyEntity[]> {
    await manager.update(ApiKeyEntity, { id: In(ids) }, { revokedAt: () => 'now()' });
    return manager.find(ApiKeyEntity, { where: { id: In(ids) }, order: { createdAt: 'ASC' } });
  }

  /** The key expires within `overlapMs` of the database's now(), or when it did already if that is sooner. */
  async shortenExpiry(manager: EntityManager, keyId: string, overlapMs: number): Promise<void> {
    await manager.query(
      `UPDATE "${schemaOf(this.dataSource)}"."api_keys" SET "expires_at" = LEAST(COALESCE("expires_at", 'infinity'), now() + $2 * interval '1 millisecond') WHERE "id" = $1`,
      [keyId, overlapMs],
    );
  }

  /** Names the key's successor and returns the key as stored. */
  async setSuccessor(manager: EntityManager, keyId: string, successorId: string): Promise<ApiKeyEntity> {
    await manager.update(ApiKeyEntity, { id: keyId }, { replacedBy: successorId });
    return manager.findOneByOrFail(ApiKeyEntity, { id: keyId });
  }
}
