import { randomUUID } from 'node:crypto';
import { isUniqueViolation } from '@app/database';
import { ApiError } from '@app/errors';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AdminActor, AdminRequestContext } from '../access/admin-context';
import { AuditLog, diff } from '../access/audit-log';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { ConsumerChanges } from '../consumers/consumer-changes';
import { ConsumerLocks } from '../consumers/consumer-locks';
import { ConsumersService } from '../consumers/consumers.service';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { normalizedAddressList } from '../consumers/allowed-addresses';
import { clientBindingHash } from './client-binding';
import { ClientBindingEntity } from './client-binding.entity';

const UNIQUE_BINDING = 'UQ_client_bindings_issuer_client';

/**
 * A consumer's OAuth client bindings (docs/oauth.md): list, bind, unbind. Each change runs under the consumer's lock
 * (ConsumerLocks: 404, 403 as for its keys), audits in the same transaction, and is published once committed, so
 * that every instance forgets what it cached of that client (its tokens included) as it does for a revoked key.
 */
@Injectable()
export class ClientBindingsService {
  private readonly issuers: ReadonlySet<string>;

  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    private readonly consumers: ConsumersService,
    private readonly locks: ConsumerLocks,
    private readonly changes: ConsumerChanges,
    private readonly audit: AuditLog,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.issuers = new Set(config.oauth.issuers.map((entry) => entry.issuer));
  }

  async list(actor: AdminActor, name: string): Promise<ClientBindingEntity[]> {
    const { consumer } = await this.consumers.get(actor, name);
    return this.dataSource.manager.find(ClientBindingEntity, {
      where: { consumerId: consumer.id },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** Binds `clientId` of `issuer` (one of OAUTH_ISSUERS) to the consumer; 409 when that client is bound already. */
  async bind(
    context: AdminRequestContext,
    name: string,
    issuer: string,
    clientId: string,
  ): Promise<ClientBindingEntity> {
    if (!this.issuers.has(issuer))
      throw new ApiError(
        'VALIDATION_FAILED',
        this.issuers.size === 0
          ? 'issuer must be a configured issuer: none is (OAUTH_ISSUERS is unset)'
          : `issuer must be one of the configured issuers (OAUTH_ISSUERS): ${[...this.issuers].join(', ')}`,
      );
    let binding: ClientBindingEntity;
    try {
      binding = await this.locks.change(context.actor, name, async (manager, consumer) => {
        const existing = await manager.findOne(ClientBindingEntity, { where: { issuer, clientId } });
        if (existing) throw this.taken(issuer, clientId);
        const created = await manager.save(
          manager.create(ClientBindingEntity, {
            id: randomUUID(),
            consumerId: consumer.id,
            issuer,
            clientId,
            allowedAddresses: null,
          }),
        );
        await this.audit.record(context, manager, {
          action: 'client-binding.create',
          targetConsumer: name,
          changes: diff({}, { bindingId: created.id, issuer, clientId }),
        });
        return created;
      });
    } catch (error) {
      // Two binds of one client at once: the second meets the first's row at commit.
      if (isUniqueViolation(error, UNIQUE_BINDING)) throw this.taken(issuer, clientId);
      throw error;
    }
    await this.changes.publish({ keyHashes: [clientBindingHash(issuer, clientId)], consumerIds: [binding.consumerId] });
    return binding;
  }

  /** Removes one binding of the consumer: its tokens are refused on every instance. 404 for another's or none. */
  async unbind(context: AdminRequestContext, name: string, id: string): Promise<ClientBindingEntity> {
    const removed = await this.locks.change(context.actor, name, async (manager, consumer) => {
      const binding = await manager.findOne(ClientBindingEntity, { where: { id, consumerId: consumer.id } });
      if (!binding) throw new ApiError('NOT_FOUND', `Consumer "${name}" has no client binding ${id}.`);
      await manager.delete(ClientBindingEntity, { id });
      await this.audit.record(context, manager, {
        action: 'client-binding.delete',
        targetConsumer: name,
        changes: diff({ bindingId: id, issuer: binding.issuer, clientId: binding.clientId }, {}),
      });
      return binding;
    });
    await this.changes.publish({
      keyHashes: [clientBindingHash(removed.issuer, removed.clientId)],
      consumerIds: [removed.consumerId],
    });
    return removed;
  }

  /** Sets where the binding's tokens may be used from (null: anywhere its consumer allows), audited. */
  async setAllowedAddresses(
    context: AdminRequestContext,
    name: string,
    id: string,
    allowedAddresses: string[] | null,
  ): Promise<ClientBindingEntity> {
    const ranges = allowedAddresses === null ? null : normalizedAddressList(allowedAddresses)!;
    const binding = await this.locks.change(context.actor, name, async (manager, consumer) => {
      const current = await manager.findOne(ClientBindingEntity, { where: { id, consumerId: consumer.id } });
      if (!current) throw new ApiError('NOT_FOUND', `Consumer "${name}" has no client binding ${id}.`);
      const changes = diff({ allowedAddresses: current.allowedAddresses }, { allowedAddresses: ranges });
      if (Object.keys(changes).length === 0) return current;
      await manager.update(ClientBindingEntity, { id }, { allowedAddresses: ranges });
      await this.audit.record(context, manager, {
        action: 'client-binding.update',
        targetConsumer: name,
        changes: { bindingId: { before: id, after: id }, ...changes },
      });
      return { ...current, allowedAddresses: ranges };
    });
    await this.changes.publish({
      keyHashes: [clientBindingHash(binding.issuer, binding.clientId)],
      consumerIds: [],
    });
    return binding;
  }

  private taken(issuer: string, clientId: string): ApiError {
    return new ApiError(
      'CLIENT_ALREADY_BOUND',
      `Client "${clientId}" of ${issuer} is bound to a consumer already: unbind it there first.`,
    );
  }
}
