import { randomUUID } from 'node:crypto';
import { isUniqueViolation } from '@app/database';
import { ApiError } from '@app/errors';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { GATEWAY_DATA_SOURCE, schemaOf } from '../database/data-source.options';
import { Limits, PlanName } from '../plans/plans';
import { AdminActor, AdminRequestContext } from '../access/admin-context';
import { assertMayReview, assertMayTouch, consumerFilter } from '../access/admin-policy';
import { AuditLog, diff } from '../access/audit-log';
import { ConsumerEntity } from '../consumers/consumer.entity';
import { ConsumersService } from '../consumers/consumers.service';
import { PlanRequestEntity, PlanRequestStatus } from './plan-request.entity';

export interface NewPlanRequest {
  consumer: string;
  requestedPlan: PlanName;
  expectedVolume: string;
  message: string;
}

export interface PlanRequestQuery {
  status?: PlanRequestStatus;
  consumer?: string;
  limit: number;
  /** The id of the last request of the previous page. */
  after?: string;
}

/** The partial unique index that allows one pending request per consumer. */
const ONE_PENDING = 'UQ_plan_requests_one_pending';

/**
 * Plan requests (issue #25): a consumer asks for another plan, an operator approves or declines. A decision locks
 * the request's row (SELECT ... FOR UPDATE): of two concurrent decisions exactly one finds it pending. An approval
 * changes the plan through ConsumersService.update, in the same transaction, so that the audit and the change
 * channel to the other instances are exactly PATCH /consumers'.
 */
@Injectable()
export class PlanRequestsService {
  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    private readonly consumers: ConsumersService,
    private readonly audit: AuditLog,
  ) {}

  async create(context: AdminRequestContext, input: NewPlanRequest): Promise<PlanRequestEntity> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const consumer = await this.consumerNamed(manager, input.consumer);
        assertMayTouch(context.actor, consumer);
        if (input.requestedPlan === consumer.plan) {
          throw new ApiError(
            'PLAN_UNCHANGED',
            `requestedPlan must differ from the consumer's current plan (${consumer.plan}).`,
          );
        }
        const request = manager.create(PlanRequestEntity, {
          id: randomUUID(),
          consumer: consumer.name,
          currentPlan: consumer.plan,
          requestedPlan: input.requestedPlan,
          expectedVolume: input.expectedVolume,
          message: input.message,
          status: 'pending',
          decidedAt: null,
          decidedBy: null,
          note: null,
          requestedBy: context.endUser?.onBehalfOf ?? context.actor.name,
        });
        await manager.insert(PlanRequestEntity, request);
        await this.audit.record(context, manager, {
          action: 'plan-request.create',
          targetConsumer: consumer.name,
          changes: diff({}, { requestId: request.id, currentPlan: consumer.plan, requestedPlan: input.requestedPlan }),
        });
        return manager.findOneByOrFail(PlanRequestEntity, { id: request.id });
      });
    } catch (error) {
      if (isUniqueViolation(error, ONE_PENDING))
        throw new ApiError('PLAN_REQUEST_PENDING', `Consumer "${input.consumer}" already has a pending plan request.`);
      throw error;
    }
  }

  /** Oldest first (the queue an operator works through), keyset-paged on (createdAt, id). */
  async list(actor: AdminActor, query: PlanRequestQuery): Promise<{ items: PlanRequestEntity[]; next: string | null }> {
    const builder = this.dataSource
      .getRepository(PlanRequestEntity)
      .createQueryBuilder('r')
      .orderBy('r.created_at', 'ASC')
      .addOrderBy('r.id', 'ASC')
      .take(query.limit + 1);
    if (query.consumer !== undefined) {
      const consumer = await this.dataSource.getRepository(ConsumerEntity).findOneBy({ name: query.consumer });
      if (consumer) assertMayTouch(actor, consumer);
      builder.andWhere('r.consumer = :consumer', { consumer: query.consumer });
    }
    // Only the requests of the consumers the actor may touch (its own, or those now on its plans).
    const only = consumerFilter(actor);
    if (only?.createdByToken !== undefined) {
      builder.andWhere(
        `r.consumer IN (SELECT c.name FROM "${schemaOf(this.dataSource)}"."consumers" c WHERE c.created_by_token = :actorId)`,
        { actorId: only.createdByToken },
      );
    } else if (only?.plans !== undefined) {
      builder.andWhere(
        `r.consumer IN (SELECT c.name FROM "${schemaOf(this.dataSource)}"."consumers" c WHERE c.plan IN (:...plans))`,
        { plans: only.plans },
      );
    }
    if (query.status !== undefined) builder.andWhere('r.status = :status', { status: query.status });
    if (query.after !== undefined) {
      const last = await this.dataSource.getRepository(PlanRequestEntity).findOneBy({ id: query.after });
      if (!last) throw new ApiError('VALIDATION_FAILED', 'after must be the next of a previous page');
      // Compared in SQL: created_at has microseconds, a JavaScript Date only milliseconds.
      builder.andWhere(
        `(r.created_at, r.id) > (SELECT p.created_at, p.id FROM "${schemaOf(this.dataSource)}"."plan_requests" p WHERE p.id = :after)`,
        { after: last.id },
      );
    }
    const rows = await builder.getMany();
    const items = rows.slice(0, query.limit);
    return { items, next: rows.length > query.limit ? items[items.length - 1].id : null };
  }

  /** The plan changes and the request is approved, in one transaction under the consumer's lock. */
  async approve(context: AdminRequestContext, id: string, limits: Limits | null): Promise<PlanRequestEntity> {
    assertMayReview(context.actor);
    const found = await this.find(this.dataSource.manager, id, false);
    await this.consumers.update(
      context,
      found.consumer,
      { plan: found.requestedPlan as PlanName, limits },
      async (manager, consumer) => {
        const request = await this.find(manager, id, true);
        this.assertPending(request);
        // Asked from another plan than the consumer is on now (an operator moved it since): approving would move it
        // from a plan nobody asked to leave, perhaps down. Decline it, or let the developer ask again.
        if (consumer.plan !== request.currentPlan) {
          throw new ApiError(
            'PLAN_REQUEST_STALE',
            `Plan request ${id} asked to move from ${request.currentPlan}, but the consumer is on ${consumer.plan} now: decline it, or ask again.`,
          );
        }
        await manager.update(
          PlanRequestEntity,
          { id },
          { status: 'approved', decidedAt: () => 'now()', decidedBy: context.actor.name },
        );
        await this.audit.record(context, manager, {
          action: 'plan-request.approve',
          targetConsumer: request.consumer,
          changes: diff(
            { requestId: id, status: 'pending', plan: request.currentPlan },
            { requestId: id, status: 'approved', plan: request.requestedPlan },
          ),
        });
      },
    );
    return this.find(this.dataSource.manager, id, false);
  }

  async decline(context: AdminRequestContext, id: string, note: string): Promise<PlanRequestEntity> {
    assertMayReview(context.actor);
    return this.dataSource.transaction(async (manager) => {
      const request = await this.find(manager, id, true);
      // A plans token decides only for consumers on its plans, as an approval's update checks.
      const consumer = await manager.findOneBy(ConsumerEntity, { name: request.consumer });
      if (consumer) assertMayTouch(context.actor, consumer);
      this.assertPending(request);
      await manager.update(
        PlanRequestEntity,
        { id },
        { status: 'declined', decidedAt: () => 'now()', decidedBy: context.actor.name, note },
      );
      await this.audit.record(context, manager, {
        action: 'plan-request.decline',
        targetConsumer: request.consumer,
        changes: diff({ requestId: id, status: 'pending', note: null }, { requestId: id, status: 'declined', note }),
      });
      return manager.findOneByOrFail(PlanRequestEntity, { id });
    });
  }

  private assertPending(request: PlanRequestEntity): void {
    if (request.status !== 'pending')
      throw new ApiError('PLAN_REQUEST_DECIDED', `Plan request ${request.id} was already ${request.status}.`);
  }

  private async find(manager: EntityManager, id: string, lock: boolean): Promise<PlanRequestEntity> {
    const request = await manager.findOne(PlanRequestEntity, {
      where: { id },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!request) throw new ApiError('NOT_FOUND', `No plan request ${id}.`);
    return request;
  }

  private async consumerNamed(manager: EntityManager, name: string): Promise<ConsumerEntity> {
    const consumer = await manager.findOneBy(ConsumerEntity, { name });
    if (!consumer) throw new ApiError('NOT_FOUND', `No consumer named "${name}".`);
    return consumer;
  }
}
