import { randomUUID } from 'node:crypto';
import { ApiError } from '@app/errors';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { PlanLimits } from '../plans/plan-limits';
import { Limits, PlanName } from '../plans/plans';
import { ApiKeyEntity } from './api-key.entity';
import { ConsumerChanges } from './consumer-changes';
import { ConsumerEntity } from './consumer.entity';
import { ConsumerRepository, limitsOf } from './consumer.repository';

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

/** The consumers-file format (`keys import/export`, `POST /import`, `GET /export`): hashes only, never keys. */
@Injectable()
export class ConsumersFile {
  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    private readonly consumers: ConsumerRepository,
    private readonly changes: ConsumerChanges,
    private readonly planLimits: PlanLimits,
  ) {}

  /**
   * Imports consumers in the consumers-file format, idempotently: a consumer is matched by name (created, or
   * its plan and limits brought in line), a key by hash (added, or revoked when the file says so). Importing
   * the same file twice changes nothing the second time. A hash held by another consumer is refused.
   */
  async import(consumers: FileConsumer[]): Promise<ImportResult> {
    for (const c of consumers) this.planLimits.check(c.plan, c.limits ?? null);
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
    const page = await this.consumers.list(limit, after);
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

}

function sameLimits(a: Limits | null, b: Limits | null): boolean {
  return a === b || (a !== null && b !== null && a.perMinute === b.perMinute && a.perDay === b.perDay);
}
