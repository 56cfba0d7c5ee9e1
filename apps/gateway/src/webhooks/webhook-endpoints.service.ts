import { randomUUID } from 'node:crypto';
import { isFleetWide } from '@app/contract';
import { ApiError } from '@app/errors';
import { generateWebhookSecret, OutboundClient } from '@app/outbound';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { AdminActor, AdminRequestContext } from '../access/admin-context';
import { assertMayTouch } from '../access/admin-policy';
import { AuditLog, diff } from '../access/audit-log';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { ConsumerEntity } from '../consumers/consumer.entity';
import { GATEWAY_DATA_SOURCE, schemaOf } from '../database/data-source.options';
import { ThresholdEvent, ThresholdEventsRepository } from '../alerts/threshold-events.repository';
import type { ThresholdEventType, ThresholdPolicyName } from '../alerts/threshold-event-table';
import { ENDPOINT_SECRET_BYTES, FLEET_TEST_CONSUMER, TEST_EVENT_TYPE } from './webhook-events';
import { targetRefused } from './webhook-target';
import {
  WebhookAttemptEntity,
  WebhookAttemptRow,
  WebhookDeliveryEntity,
  WebhookDeliveryRow,
  WebhookEndpointEntity,
  WebhookEndpointRow,
} from './webhook-tables';

/** Whose endpoints: a consumer's (its name), or the operators' fleet-wide ones (null). */
export type EndpointOwner = string | null;

export interface EndpointInput {
  url: string;
  description?: string;
  /** null or absent: every event type. */
  eventTypes?: string[] | null;
}

export interface EndpointChange {
  url?: string;
  description?: string;
  eventTypes?: string[] | null;
  /** false: disabled by the caller; true: enabled again (its failure span starts over). */
  enabled?: boolean;
}

export interface DeliveryWithAttempts extends WebhookDeliveryRow {
  attemptRows: WebhookAttemptRow[];
}

/** The newest attempt to an endpoint: its error, status and time (all null before any attempt). */
export interface LastAttempt {
  last_error: string | null;
  last_status: number | null;
  last_attempt_at: Date | null;
}

export interface FailingEndpoint {
  endpoint: WebhookEndpointRow;
  last: LastAttempt;
}

/** The most endpoints the failing list answers. */
export const FAILING_MAX = 1000;

/** The time an attempt's error text is cut to (the column's width). */
export const ERROR_TEXT_MAX = 500;

/**
 * Webhook endpoints and their deliveries, as the admin API changes and reads them (docs/webhooks.md). Every write
 * is one transaction with its audit row; a consumer's endpoints are reached through the admin policy's object rule
 * (the token's own consumers), the fleet-wide ones (consumer null) by fleet-wide tokens only. A URL is checked
 * with the outbound policy when saved (and again by every attempt, at connect time).
 */
@Injectable()
export class WebhookEndpointsService {
  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly outbound: OutboundClient,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly thresholdEventLog: ThresholdEventsRepository,
  ) {}

  async list(actor: AdminActor, owner: EndpointOwner): Promise<WebhookEndpointRow[]> {
    await this.ownerChecked(this.dataSource.manager, actor, owner);
    return this.dataSource.manager.find(WebhookEndpointEntity, {
      where: { consumer: owner ?? IsNull() },
      order: { created_at: 'ASC', id: 'ASC' },
    });
  }

  async get(actor: AdminActor, owner: EndpointOwner, id: string): Promise<WebhookEndpointRow> {
    await this.ownerChecked(this.dataSource.manager, actor, owner);
    return this.endpoint(this.dataSource.manager, owner, id, false);
  }

  /** The new endpoint, its secret in full (shown this once). */
  async create(context: AdminRequestContext, owner: EndpointOwner, input: EndpointInput): Promise<WebhookEndpointRow> {
    await this.ownerChecked(this.dataSource.manager, context.actor, owner);
    await this.assertTarget(input.url);
    return this.dataSource.transaction(async (manager) => {
      // Writers of one owner's endpoints take turns, so that two creations cannot both pass the cap.
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`webhook-endpoints:${owner ?? ''}`]);
      await this.ownerChecked(manager, context.actor, owner);
      const count = await manager.countBy(WebhookEndpointEntity, { consumer: owner ?? IsNull() });
      const max = this.config.webhooks.maxEndpoints;
      if (count >= max)
        throw new ApiError(
          'WEBHOOK_ENDPOINT_LIMIT',
          `${owner === null ? 'The fleet has' : `Consumer "${owner}" has`} ${count} webhook endpoints, the most allowed (WEBHOOK_MAX_ENDPOINTS ${max}): remove one first.`,
        );
      const row: WebhookEndpointRow = {
        id: randomUUID(),
        consumer: owner,
        url: input.url,
        description: input.description ?? '',
        event_types: input.eventTypes ?? null,
        secret: generateWebhookSecret(ENDPOINT_SECRET_BYTES),
        previous_secret: null,
        previous_secret_until: null,
        enabled: true,
        disabled_at: null,
        disabled_reason: null,
        created_at: new Date(this.clock.now()),
        failing_since: null,
      };
      await manager.insert(WebhookEndpointEntity, row);
      await this.audit.record(context, manager, {
        action: 'webhook-endpoint.create',
        targetConsumer: owner,
        changes: diff({}, { endpointId: row.id, url: row.url, eventTypes: row.event_types }),
      });
      return row;
    });
  }

  async update(
    context: AdminRequestContext,
    owner: EndpointOwner,
    id: string,
    change: EndpointChange,
  ): Promise<WebhookEndpointRow> {
    await this.ownerChecked(this.dataSource.manager, context.actor, owner);
    if (change.url !== undefined) await this.assertTarget(change.url);
    return this.dataSource.transaction(async (manager) => {
      const before = await this.endpoint(manager, owner, id, true);
      const after: WebhookEndpointRow = {
        ...before,
        url: change.url ?? before.url,
        description: change.description ?? before.description,
        event_types: change.eventTypes !== undefined ? change.eventTypes : before.event_types,
      };
      if (change.enabled === true && !before.enabled)
        Object.assign(after, { enabled: true, disabled_at: null, disabled_reason: null, failing_since: null });
      if (change.enabled === false && before.enabled)
        Object.assign(after, {
          enabled: false,
          disabled_at: new Date(this.clock.now()),
          disabled_reason: `disabled by ${context.actor.name}`,
        });
      const { id: _id, ...columns } = after;
      await manager.update(WebhookEndpointEntity, { id }, columns);
      await this.audit.record(context, manager, {
        action: 'webhook-endpoint.update',
        targetConsumer: owner,
        changes: diff(
          {
            endpointId: id,
            url: before.url,
            description: before.description,
            eventTypes: before.event_types,
            enabled: before.enabled,
          },
          {
            endpointId: id,
            url: after.url,
            description: after.description,
            eventTypes: after.event_types,
            enabled: after.enabled,
          },
        ),
      });
      return after;
    });
  }

  /** The endpoint goes, with its deliveries and their attempts. */
  async remove(context: AdminRequestContext, owner: EndpointOwner, id: string): Promise<void> {
    await this.ownerChecked(this.dataSource.manager, context.actor, owner);
    await this.dataSource.transaction(async (manager) => {
      const s = schemaOf(this.dataSource);
      // Its deliveries first, then the endpoint: the order an attempt being recorded takes them in (its delivery,
      // then its endpoint's failing state); the other way round, the two deadlocked on PostgreSQL (a 500).
      await manager.query(`SELECT id FROM "${s}"."webhook_deliveries" WHERE endpoint_id = $1 FOR UPDATE`, [id]);
      const endpoint = await this.endpoint(manager, owner, id, true);
      await manager.query(
        `DELETE FROM "${s}"."webhook_attempts" WHERE delivery_id IN (SELECT id FROM "${s}"."webhook_deliveries" WHERE endpoint_id = $1)`,
        [id],
      );
      await manager.delete(WebhookDeliveryEntity, { endpoint_id: id });
      await manager.delete(WebhookEndpointEntity, { id });
      await this.audit.record(context, manager, {
        action: 'webhook-endpoint.delete',
        targetConsumer: owner,
        changes: diff({ endpointId: id, url: endpoint.url }, {}),
      });
    });
  }

  /**
   * A new secret, in full (shown this once). The old one keeps signing beside it for `overlapSeconds` (each delivery
   * then carries both signatures: the receiver switches without losing one), 0: it stops at once. A rotation during
   * an overlap ends that overlap: only the secret just replaced goes on signing.
   */
  async rotateSecret(
    context: AdminRequestContext,
    owner: EndpointOwner,
    id: string,
    overlapSeconds: number,
  ): Promise<WebhookEndpointRow> {
    await this.ownerChecked(this.dataSource.manager, context.actor, owner);
    return this.dataSource.transaction(async (manager) => {
      const endpoint = await this.endpoint(manager, owner, id, true);
      const now = this.clock.now();
      const rotated = {
        secret: generateWebhookSecret(ENDPOINT_SECRET_BYTES),
        previous_secret: overlapSeconds > 0 ? endpoint.secret : null,
        previous_secret_until: overlapSeconds > 0 ? new Date(now + overlapSeconds * 1000) : null,
      };
      await manager.update(WebhookEndpointEntity, { id }, rotated);
      // The audit never holds a secret: only that it changed, and until when the old one signs.
      await this.audit.record(context, manager, {
        action: 'webhook-endpoint.rotate-secret',
        targetConsumer: owner,
        changes: diff(
          { endpointId: id, secretRotatedAt: null, previousSecretSignsUntil: null },
          { endpointId: id, secretRotatedAt: new Date(now), previousSecretSignsUntil: rotated.previous_secret_until },
        ),
      });
      return { ...endpoint, ...rotated };
    });
  }

  /**
   * A `webhook.test` message for this endpoint only: its delivery, pending (the worker sends it within a poll). A
   * fleet-wide endpoint's test names no consumer: `*` (as the usage history names the fleet).
   */
  async sendTest(context: AdminRequestContext, owner: EndpointOwner, id: string): Promise<DeliveryWithAttempts> {
    await this.ownerChecked(this.dataSource.manager, context.actor, owner);
    const consumer = owner ?? FLEET_TEST_CONSUMER;
    return this.dataSource.transaction(async (manager) => {
      const endpoint = await this.endpoint(manager, owner, id, false);
      const now = new Date(this.clock.now());
      const messageId = randomUUID();
      const payload = {
        id: randomUUID(),
        type: TEST_EVENT_TYPE,
        consumer,
        endpoint: endpoint.id,
        createdAt: now.toISOString(),
      };
      const s = schemaOf(this.dataSource);
      // Dispatched at once: the worker's fan-out never sends it to the consumer's other endpoints.
      const [message]: Array<{ seq: string }> = await manager.query(
        `INSERT INTO "${s}"."outbox_messages" (id, kind, consumer, payload, created_at, available_at, state, attempts) ` +
          `VALUES ($1, $2, $3, $4::jsonb, $5, $5, 'dispatched', 0) RETURNING seq`,
        [messageId, TEST_EVENT_TYPE, consumer, JSON.stringify(payload), now],
      );
      const delivery = newDelivery({ messageId, kind: TEST_EVENT_TYPE, consumer, messageSeq: message.seq }, now, {
        endpointId: endpoint.id,
      });
      await manager.insert(WebhookDeliveryEntity, delivery);
      await this.audit.record(context, manager, {
        action: 'webhook-endpoint.test',
        targetConsumer: owner,
        changes: diff({}, { endpointId: id, deliveryId: delivery.id }),
      });
      return { ...delivery, attemptRows: [] };
    });
  }

  /**
   * A consumer's threshold events (docs/alerts.md), newest first, keyset-paged: what its endpoints were sent, read
   * here because the owner rule is this room's (the alerts room may not read consumers).
   */
  async thresholdEvents(
    actor: AdminActor,
    owner: string,
    page: { limit: number; after?: string; policy?: ThresholdPolicyName; type?: ThresholdEventType },
  ): Promise<{ items: ThresholdEvent[]; next: string | null }> {
    await this.ownerChecked(this.dataSource.manager, actor, owner);
    const found = await this.thresholdEventLog.page(owner, page);
    if (!found) throw new ApiError('VALIDATION_FAILED', 'after must be the next of a previous page');
    return found;
  }

  /**
   * Newest first, keyset-paged on (created_at, message_seq, id), each with its attempts: the deliveries of one
   * fan-out share their time, and go newest message first.
   */
  async deliveries(
    actor: AdminActor,
    owner: EndpointOwner,
    id: string,
    page: { limit: number; after?: string },
  ): Promise<{ items: DeliveryWithAttempts[]; next: string | null }> {
    await this.ownerChecked(this.dataSource.manager, actor, owner);
    await this.endpoint(this.dataSource.manager, owner, id, false);
    const s = schemaOf(this.dataSource);
    const builder = this.dataSource.manager
      .createQueryBuilder(WebhookDeliveryEntity, 'd')
      .where('d.endpoint_id = :id', { id })
      .orderBy('d.created_at', 'DESC')
      .addOrderBy('d.message_seq', 'DESC')
      .addOrderBy('d.id', 'DESC')
      .take(page.limit + 1);
    if (page.after !== undefined) {
      const last = await this.dataSource.manager.findOneBy(WebhookDeliveryEntity, { id: page.after, endpoint_id: id });
      if (!last) throw new ApiError('VALIDATION_FAILED', 'after must be the next of a previous page');
      builder.andWhere(
        `(d.created_at, d.message_seq, d.id) < (SELECT p.created_at, p.message_seq, p.id FROM "${s}"."webhook_deliveries" p WHERE p.id = :after)`,
        { after: last.id },
      );
    }
    const rows = await builder.getMany();
    const items = rows.slice(0, page.limit);
    const attempts = items.length
      ? await this.dataSource.manager
          .createQueryBuilder(WebhookAttemptEntity, 'a')
          .where('a.delivery_id IN (:...ids)', { ids: items.map((d) => d.id) })
          .orderBy('a.attempt', 'ASC')
          .getMany()
      : [];
    return {
      items: items.map((d) => ({ ...d, attemptRows: attempts.filter((a) => a.delivery_id === d.id) })),
      next: rows.length > page.limit ? items[items.length - 1].id : null,
    };
  }

  /**
   * A new pending delivery of the same message to the same endpoint (the same `webhook-id`); enables nothing. The
   * path names the owner and the endpoint: a delivery to any other endpoint is "no such delivery" (404), so a token
   * that reaches several consumers (the portal's) is held to the one it names.
   */
  async redeliver(
    context: AdminRequestContext,
    owner: EndpointOwner,
    endpointId: string,
    deliveryId: string,
  ): Promise<DeliveryWithAttempts> {
    await this.ownerChecked(this.dataSource.manager, context.actor, owner);
    return this.dataSource.transaction(async (manager) => {
      const endpoint = await this.endpoint(manager, owner, endpointId, false);
      const original = await manager.findOneBy(WebhookDeliveryEntity, { id: deliveryId, endpoint_id: endpoint.id });
      if (!original)
        throw new ApiError(
          'NOT_FOUND',
          owner === null
            ? `Fleet-wide webhook endpoint ${endpoint.id} has no delivery ${deliveryId}.`
            : `Webhook endpoint ${endpoint.id} of consumer "${owner}" has no delivery ${deliveryId}.`,
        );
      const now = new Date(this.clock.now());
      const delivery = newDelivery(
        {
          messageId: original.message_id,
          kind: original.kind,
          consumer: original.consumer,
          messageSeq: original.message_seq,
        },
        now,
        { endpointId: endpoint.id },
      );
      await manager.insert(WebhookDeliveryEntity, delivery);
      await this.audit.record(context, manager, {
        action: 'webhook-delivery.redeliver',
        targetConsumer: owner,
        changes: diff({}, { endpointId: endpoint.id, deliveryId: delivery.id, redelivers: original.id }),
      });
      return { ...delivery, attemptRows: [] };
    });
  }

  /**
   * Endpoints failing now or disabled, across consumers, longest failing first (the console's list), each with its
   * newest attempt (of any of its deliveries): one query, the attempt by a lateral join on the attempts' indexes.
   */
  async failing(): Promise<FailingEndpoint[]> {
    const s = schemaOf(this.dataSource);
    const rows: Array<WebhookEndpointRow & LastAttempt> = await this.dataSource.query(
      `SELECT e.*, last.error AS last_error, last.status_code AS last_status, last.at AS last_attempt_at
         FROM "${s}"."webhook_endpoints" e
         LEFT JOIN LATERAL (
           SELECT a.error, a.status_code, a.at
             FROM "${s}"."webhook_deliveries" d
             JOIN "${s}"."webhook_attempts" a ON a.delivery_id = d.id
            WHERE d.endpoint_id = e.id
            ORDER BY a.at DESC, a.attempt DESC
            LIMIT 1
         ) last ON true
        WHERE e.failing_since IS NOT NULL OR e.enabled = false
        ORDER BY e.failing_since ASC NULLS LAST, e.created_at ASC, e.id ASC
        LIMIT $1`,
      [FAILING_MAX],
    );
    return rows.map(({ last_error, last_status, last_attempt_at, ...endpoint }) => ({
      endpoint,
      last: { last_error, last_status, last_attempt_at },
    }));
  }

  private async assertTarget(url: string): Promise<void> {
    const verdict = await this.outbound.check(url);
    if (verdict.kind !== 'accepted') throw targetRefused(verdict);
  }

  /** 404 for an unknown consumer, 403 outside the token's part; a fleet-wide endpoint needs a fleet-wide token. */
  private async ownerChecked(manager: EntityManager, actor: AdminActor, owner: EndpointOwner): Promise<void> {
    if (owner === null) {
      if (!isFleetWide(actor))
        throw new ApiError(
          'FORBIDDEN',
          `Token "${actor.name}" is limited to its own consumers or to some plans: fleet-wide webhook endpoints are an operator's.`,
        );
      return;
    }
    const consumer = await manager.findOneBy(ConsumerEntity, { name: owner });
    if (!consumer) throw new ApiError('NOT_FOUND', `No consumer named "${owner}".`);
    assertMayTouch(actor, consumer);
  }

  private async endpoint(
    manager: EntityManager,
    owner: EndpointOwner,
    id: string,
    lock: boolean,
  ): Promise<WebhookEndpointRow> {
    const endpoint = await manager.findOne(WebhookEndpointEntity, {
      where: { id, consumer: owner ?? IsNull() },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!endpoint)
      throw new ApiError(
        'NOT_FOUND',
        owner === null ? `No fleet-wide webhook endpoint ${id}.` : `Consumer "${owner}" has no webhook endpoint ${id}.`,
      );
    return endpoint;
  }
}

/** A pending delivery of a message, due now. */
export function newDelivery(
  message: { messageId: string; kind: string; consumer: string; messageSeq: string },
  now: Date,
  to: { endpointId: string } | { email: string },
): WebhookDeliveryRow {
  return {
    id: randomUUID(),
    message_id: message.messageId,
    endpoint_id: 'endpointId' in to ? to.endpointId : null,
    email: 'email' in to ? to.email : null,
    consumer: message.consumer,
    kind: message.kind,
    message_seq: message.messageSeq,
    state: 'pending',
    attempts: 0,
    next_attempt_at: now,
    lease_until: null,
    last_status: null,
    last_error: null,
    created_at: now,
    delivered_at: null,
  };
}
