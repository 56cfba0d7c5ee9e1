import { randomUUID } from 'node:crypto';
import { ApiError } from '@app/errors';
import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AdminRequestContext } from '../access/admin-context';
import { AuditLog, diff } from '../access/audit-log';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { normalizedAddressList } from './allowed-addresses';
import { ApiKeyEntity } from './api-key.entity';
import { generateApiKey, hashApiKey, keyHint } from './api-key';
import { ConsumerChanges } from './consumer-changes';
import { ConsumerEntity } from './consumer.entity';
import { ConsumerLocks } from './consumer-locks';
import { ConsumerRepository } from './consumer.repository';

export interface IssuedKey {
  key: string;
  record: ApiKeyEntity;
}

/**
 * A consumer's keys: issue, revoke, rotate. Each use case runs under the consumer's lock (ConsumerLocks), applies
 * the key rules (the cap on active keys, rotate once, only a usable key), audits in the same transaction and
 * publishes the changed keys once committed.
 */
@Injectable()
export class ConsumerKeysService {
  constructor(
    private readonly repository: ConsumerRepository,
    private readonly locks: ConsumerLocks,
    private readonly changes: ConsumerChanges,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /** Another key for the consumer (the others keep working), within the cap on active keys. */
  async issueKey(context: AdminRequestContext, name: string, expiresAt?: Date): Promise<IssuedKey> {
    const issued = await this.locks.change(context.actor, name, async (manager, consumer) => {
      await this.assertRoomForKeys(manager, consumer, 1);
      const issued = await this.insertKey(manager, consumer.id, expiresAt ?? null);
      await this.audit.record(context, manager, {
        action: 'key.issue',
        targetConsumer: name,
        targetKey: issued.record.id,
        targetKeyHint: issued.record.hint,
        changes: diff({}, { hint: issued.record.hint, expiresAt: issued.record.expiresAt }),
      });
      return issued;
    });
    await this.changes.publish({ keyHashes: [issued.record.keyHash], consumerIds: [] });
    return issued;
  }

  /** Revokes one key (by id) or, without an id, every key of the consumer still unrevoked. Idempotent. */
  async revoke(context: AdminRequestContext, name: string, keyId?: string): Promise<ApiKeyEntity[]> {
    const revoked = await this.locks.change(context.actor, name, async (manager, consumer) => {
      if (keyId !== undefined) await this.keyOf(manager, consumer, keyId);
      const targets = await this.repository.unrevokedKeys(manager, consumer.id, keyId);
      if (targets.length === 0) return [];
      const done = await this.repository.revokeKeys(
        manager,
        targets.map((k) => k.id),
      );
      for (const key of done)
        await this.audit.record(context, manager, {
          action: 'key.revoke',
          targetConsumer: name,
          targetKey: key.id,
          targetKeyHint: key.hint,
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
    const result = await this.locks.change(context.actor, name, async (manager, consumer) => {
      const old = await this.keyOf(manager, consumer, keyId);
      if (old.revokedAt !== null)
        throw new ApiError('KEY_REVOKED', `Key ${keyId} is revoked: issue a new key instead.`);
      if (old.replacedBy !== null) {
        throw new ApiError(
          'KEY_ALREADY_ROTATED',
          `Key ${keyId} was already rotated: its successor is key ${old.replacedBy} (rotate that one instead).`,
        );
      }
      if (old.expiresAt !== null && old.expiresAt.getTime() <= this.clock.now())
        throw new ApiError('KEY_EXPIRED', `Key ${keyId} has expired: issue a new key instead.`);
      await this.repository.shortenExpiry(manager, old.id, overlapMs);
      // Counted after the old key's new expiry: without an overlap it stops now, and the new key takes its place.
      await this.assertRoomForKeys(manager, consumer, 1);
      const issued = await this.insertKey(manager, consumer.id, old.expiresAt, old.allowedAddresses);
      const previous = await this.repository.setSuccessor(manager, old.id, issued.record.id);
      await this.audit.record(context, manager, {
        action: 'key.rotate',
        targetConsumer: name,
        targetKey: old.id,
        targetKeyHint: old.hint,
        // The successor by id and by hint: the row says which key replaced which, as the pages name them.
        changes: diff(
          { expiresAt: old.expiresAt, replacedBy: null, successorHint: null },
          { expiresAt: previous.expiresAt, replacedBy: issued.record.id, successorHint: issued.record.hint },
        ),
      });
      return { issued, previous };
    });
    await this.changes.publish({ keyHashes: [result.previous.keyHash, result.issued.record.keyHash], consumerIds: [] });
    return result;
  }

  /**
   * Sets where one key may be used from (normalized ranges; null: anywhere its consumer allows), audited as
   * `key.update`; a revoked or expired key may be changed too (nothing it does changes). Every instance forgets the
   * key's record, so the next request judges the new ranges.
   */
  async setAllowedAddresses(
    context: AdminRequestContext,
    name: string,
    keyId: string,
    allowedAddresses: string[] | null,
  ): Promise<ApiKeyEntity> {
    const ranges = allowedAddresses === null ? null : normalizedAddressList(allowedAddresses)!;
    const key = await this.locks.change(context.actor, name, async (manager, consumer) => {
      const current = await this.keyOf(manager, consumer, keyId);
      const changes = diff({ allowedAddresses: current.allowedAddresses }, { allowedAddresses: ranges });
      if (Object.keys(changes).length === 0) return current;
      const updated = await this.repository.setKeyAllowedAddresses(manager, current.id, ranges);
      await this.audit.record(context, manager, {
        action: 'key.update',
        targetConsumer: name,
        targetKey: current.id,
        targetKeyHint: current.hint,
        changes,
      });
      return updated;
    });
    await this.changes.publish({ keyHashes: [key.keyHash], consumerIds: [] });
    return key;
  }

  /**
   * Refuses (409 `KEY_LIMIT_REACHED`) a change that would leave the consumer more than CONSUMER_MAX_KEYS active
   * keys (neither revoked nor expired) once `adding` more are added. Run under the consumer's lock, so that
   * concurrent issues cannot pass it.
   */
  async assertRoomForKeys(manager: EntityManager, consumer: ConsumerEntity, adding: number): Promise<void> {
    const active = await this.repository.countActiveKeys(manager, consumer.id);
    const max = this.config.consumers.maxKeys;
    if (active + adding > max) {
      throw new ApiError(
        'KEY_LIMIT_REACHED',
        `A consumer holds at most ${max} active keys (CONSUMER_MAX_KEYS): "${consumer.name}" has ${active}; revoke some first.`,
      );
    }
  }

  /** A new key (shown once: only its hash and hint are stored); a successor keeps its predecessor's allowed addresses. */
  async insertKey(
    manager: EntityManager,
    consumerId: string,
    expiresAt: Date | null,
    allowedAddresses: string[] | null = null,
  ): Promise<IssuedKey> {
    const key = generateApiKey();
    const record = await this.repository.insertKey(manager, {
      id: randomUUID(),
      consumerId,
      keyHash: hashApiKey(key),
      hint: keyHint(key),
      expiresAt,
      revokedAt: null,
      replacedBy: null,
      allowedAddresses,
    });
    return { key, record };
  }

  private async keyOf(manager: EntityManager, consumer: ConsumerEntity, keyId: string): Promise<ApiKeyEntity> {
    const key = await this.repository.findKey(manager, consumer.id, keyId);
    if (!key) throw new ApiError('NOT_FOUND', `Consumer "${consumer.name}" has no key ${keyId}.`);
    return key;
  }
}
