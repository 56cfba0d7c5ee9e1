import { randomUUID } from 'node:crypto';
import type { CreditRefill, OperationCosts } from '@app/contract';
import { isUniqueViolation } from '@app/database';
import { ApiError } from '@app/errors';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AdminActor, AdminRequestContext } from '../access/admin-context';
import { assertMaySetPlan, assertMayTouch, consumerFilter } from '../access/admin-policy';
import { AuditLog, diff } from '../access/audit-log';
import type { AlertSettings } from '../plans/alert-thresholds';
import { PlanLimits } from '../plans/plan-limits';
import { Limits, PlanName } from '../plans/plans';
import { ConsumerKeysService, IssuedKey } from './consumer-keys.service';
import { ConsumerChanges } from './consumer-changes';
import { anchorMoveOf, limitsOf } from './consumer';
import { normalizedAddressList } from './allowed-addresses';
import { ConsumerEntity } from './consumer.entity';
import { ConsumerRepository, ConsumerWithKeys } from './consumer.repository';
import { ConsumerLocks } from './consumer-locks';

export interface NewConsumer {
  name?: string;
  plan: PlanName;
  limits?: Limits;
  expiresAt?: Date;
  /** A contact address, lower-cased (the DTO normalises it). */
  email?: string;
}

/**
 * The consumer's use cases (create, list, read, change the plan or limits, disable): each one authorises the
 * caller's context, applies the plan rules (PlanLimits), writes through ConsumerRepository with its audit row in
 * the same transaction, and publishes the change once committed (ConsumerChanges), so that no instance reloads a
 * state older than the answer the caller gets.
 */
@Injectable()
export class ConsumersService {
  constructor(
    private readonly repository: ConsumerRepository,
    private readonly locks: ConsumerLocks,
    private readonly keys: ConsumerKeysService,
    private readonly changes: ConsumerChanges,
    private readonly planLimits: PlanLimits,
    private readonly audit: AuditLog,
  ) {}

  hasConsumers(): Promise<boolean> {
    return this.repository.hasConsumers();
  }

  /** Creates a consumer and its first key together; a taken name is 409 `CONSUMER_EXISTS` (names are unique in the database). */
  async create(
    context: AdminRequestContext,
    input: NewConsumer,
  ): Promise<{ consumer: ConsumerEntity; issued: IssuedKey }> {
    this.planLimits.check(input.plan, input.limits ?? null);
    const { actor } = context;
    assertMaySetPlan(actor, input.plan, input.limits);
    const name = input.name ?? `${input.plan}-${randomUUID().slice(0, 8)}`;
    try {
      const result = await this.repository.transaction(async (manager) => {
        const consumer = await this.repository.insertConsumer(manager, {
          id: randomUUID(),
          name,
          plan: input.plan,
          limitPerMinute: input.limits?.perMinute ?? null,
          limitPerDay: input.limits?.perDay ?? null,
          limitPerMonth: null,
          allowedAddresses: null,
          billingAnchor: null,
          recutPeriodStart: null,
          recutPeriodEnd: null,
          creditsEnabled: null,
          creditRefill: null,
          creditCosts: null,
          alertThresholds: null,
          disabledAt: null,
          createdByToken: actor.id,
          email: input.email ?? null,
        });
        const issued = await this.keys.insertKey(manager, consumer.id, input.expiresAt ?? null);
        await this.audit.record(context, manager, {
          action: 'consumer.create',
          targetConsumer: name,
          targetKey: issued.record.id,
          targetKeyHint: issued.record.hint,
          changes: diff(
            {},
            {
              plan: input.plan,
              limits: input.limits ?? null,
              keyExpiresAt: input.expiresAt ?? null,
              email: input.email ?? null,
            },
          ),
        });
        return { consumer, issued };
      });
      await this.changes.publish({ keyHashes: [result.issued.record.keyHash], consumerIds: [result.consumer.id] });
      return result;
    } catch (error) {
      if (isUniqueViolation(error, 'UQ_consumers_name'))
        throw new ApiError('CONSUMER_EXISTS', `A consumer named "${name}" already exists.`);
      throw error;
    }
  }

  /** One page in name order, with each one's keys: only the consumers the actor may see. */
  list(
    actor: AdminActor,
    limit: number,
    after?: string,
    prefix?: string,
    email?: string,
  ): Promise<{ items: ConsumerWithKeys[]; next: string | null }> {
    return this.repository.page({
      limit,
      after,
      prefix,
      email,
      ...consumerFilter(actor),
    });
  }

  async get(actor: AdminActor, name: string): Promise<ConsumerWithKeys> {
    const consumer = await this.repository.findByName(name);
    if (!consumer) throw ConsumerLocks.unknown(name);
    assertMayTouch(actor, consumer);
    return { consumer, keys: await this.repository.keysOf([consumer.id]) };
  }

  /**
   * Changes the plan, the consumer's own limits (`null` clears them: back to the plan's), its contact email
   * (`null` clears it) and/or where its credentials may be used from (`null`: anywhere). `alongside` runs
   * first in the same transaction, under the consumer's lock (a plan request's approval: both commit or neither).
   */
  async update(
    context: AdminRequestContext,
    name: string,
    patch: { plan?: PlanName; limits?: Limits | null; email?: string | null; allowedAddresses?: string[] | null },
    alongside?: (manager: EntityManager, consumer: ConsumerEntity) => Promise<void>,
  ): Promise<ConsumerWithKeys> {
    const consumer = await this.locks.change(context.actor, name, async (manager, current) => {
      if (alongside) await alongside(manager, current);
      const plan = patch.plan ?? current.plan;
      const limits = patch.limits === undefined ? limitsOf(current) : patch.limits;
      const email = patch.email === undefined ? current.email : patch.email;
      const allowedAddresses =
        patch.allowedAddresses === undefined
          ? current.allowedAddresses
          : normalizedAddressList(patch.allowedAddresses)!;
      this.planLimits.check(plan, limits);
      // A token's plans bound the plans and limits it sets; its own consumer's contact email it may always set
      // (the portal records a developer's email on a consumer an operator has since moved to Pro).
      if (patch.plan !== undefined || patch.limits !== undefined) assertMaySetPlan(context.actor, plan, patch.limits);
      await this.repository.updateConsumer(manager, current.id, {
        plan,
        limitPerMinute: limits?.perMinute ?? null,
        limitPerDay: limits?.perDay ?? null,
        email,
        allowedAddresses,
      });
      const changes = diff(
        {
          plan: current.plan,
          limits: limitsOf(current),
          email: current.email,
          allowedAddresses: current.allowedAddresses,
        },
        { plan, limits, email, allowedAddresses },
      );
      if (Object.keys(changes).length > 0)
        await this.audit.record(context, manager, { action: 'consumer.update', targetConsumer: name, changes });
      return current;
    });
    await this.changes.publish({ keyHashes: [], consumerIds: [consumer.id] });
    return this.get(context.actor, name);
  }

  /**
   * Sets the consumer's billing anchor and/or its own monthly quota (`null` clears either: its creation time, its
   * plan's quota), its own credit refill and costs, audited as `consumer.billing`. The counters are not touched:
   * what a move does to the period in progress is recorded on the consumer as its re-cut period (billing-period.ts
   * `moveAnchor`: the start kept, so neither a monthly refill nor the monthly quota starts again; docs/billing.md),
   * which the stores follow on the consumer's next request. `movedAtMs`: when, by the gateway's clock.
   */
  async setBilling(
    context: AdminRequestContext,
    name: string,
    patch: {
      billingAnchor?: Date | null;
      perMonth?: number | null;
      creditRefill?: CreditRefill | null;
      costs?: OperationCosts | null;
      alerts?: AlertSettings | null;
    },
    movedAtMs: number,
  ): Promise<ConsumerEntity> {
    const changed = await this.locks.change(context.actor, name, async (manager, current) => {
      const billingAnchor = patch.billingAnchor === undefined ? current.billingAnchor : patch.billingAnchor;
      const limitPerMonth = patch.perMonth === undefined ? current.limitPerMonth : patch.perMonth;
      const creditRefill = patch.creditRefill === undefined ? current.creditRefill : patch.creditRefill;
      const creditCosts = patch.costs === undefined ? current.creditCosts : patch.costs;
      const alertThresholds = patch.alerts === undefined ? current.alertThresholds : patch.alerts;
      const changes = diff(
        {
          billingAnchor: current.billingAnchor,
          perMonth: current.limitPerMonth,
          creditRefill: current.creditRefill,
          costs: current.creditCosts,
          alerts: current.alertThresholds,
        },
        { billingAnchor, perMonth: limitPerMonth, creditRefill, costs: creditCosts, alerts: alertThresholds },
      );
      if (Object.keys(changes).length === 0) return undefined;
      const move = changes.billingAnchor ? anchorMoveOf(current, billingAnchor, movedAtMs) : undefined;
      await this.repository.updateConsumer(manager, current.id, {
        billingAnchor,
        ...move?.columns,
        limitPerMonth,
        creditRefill,
        creditCosts,
        alertThresholds,
      });
      await this.audit.record(context, manager, {
        action: 'consumer.billing',
        targetConsumer: name,
        changes: { ...changes, ...move?.changes },
      });
      return current;
    });
    if (changed) await this.changes.publish({ keyHashes: [], consumerIds: [changed.id] });
    return (await this.get(context.actor, name)).consumer;
  }

  /**
   * A change of a consumer's credit balance (docs/billing.md): `work` runs under the consumer's lock, in one
   * transaction with the ledger and audit rows it writes; `creditsEnabled` (when it answers one that differs) is
   * stored in the same transaction and published to every instance, like any consumer change.
   */
  async changeCredits<T>(
    context: AdminRequestContext,
    name: string,
    work: (manager: EntityManager, consumer: ConsumerEntity) => Promise<{ value: T; creditsEnabled: boolean }>,
  ): Promise<T> {
    let published: string | undefined;
    const value = await this.locks.change(context.actor, name, async (manager, consumer) => {
      const outcome = await work(manager, consumer);
      if (outcome.creditsEnabled !== consumer.creditsEnabled) {
        await this.repository.updateConsumer(manager, consumer.id, { creditsEnabled: outcome.creditsEnabled });
        published = consumer.id;
      }
      return outcome.value;
    });
    if (published) await this.changes.publish({ keyHashes: [], consumerIds: [published] });
    return value;
  }

  /** Disables (every key refused) or enables a consumer; its keys are kept. */
  async setDisabled(context: AdminRequestContext, name: string, disabled: boolean): Promise<ConsumerWithKeys> {
    const changed = await this.locks.change(context.actor, name, async (manager, consumer) => {
      if ((consumer.disabledAt !== null) === disabled) return undefined;
      await this.repository.setDisabled(manager, consumer.id, disabled);
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
}
