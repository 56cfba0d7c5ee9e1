import { randomUUID } from 'node:crypto';
import {
  dateTimeOf,
  parseCreditRefill,
  parseOperationCosts,
  type CreditRefill,
  type OperationCosts,
} from '@app/contract';
import { ApiError } from '@app/errors';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { GATEWAY_DATA_SOURCE } from '../database/data-source.options';
import { AlertSettings, alertSettingsOf } from '../plans/alert-thresholds';
import { PlanLimits } from '../plans/plan-limits';
import { Limits, PlanName } from '../plans/plans';
import { AdminActor, AdminRequestContext } from '../access/admin-context';
import { Clock } from '../clock';
import { ApiKeyEntity } from './api-key.entity';
import { AuditLog, diff } from '../access/audit-log';
import type { AuditChanges } from '../access/audit-entry.entity';
import { ConsumerChanges } from './consumer-changes';
import { ConsumerEntity } from './consumer.entity';
import { anchorMoveOf, limitsOf } from './consumer';
import { ConsumerKeysService } from './consumer-keys.service';
import { ConsumersService } from './consumers.service';
import { ALLOWED_ADDRESSES_RULE, normalizedAddressList } from './allowed-addresses';

/** A key as the consumers-file format writes it: its hash; the rest has defaults. */
export interface FileKey {
  keyHash: string;
  keyHint?: string;
  createdAt?: string;
  expiresAt?: string;
  revokedAt?: string;
  /** Where the key may be used from (docs/oauth.md); null: anywhere its consumer allows; absent: left as it is. */
  allowedAddresses?: string[] | null;
}

/**
 * A consumer as the consumers-file format (`keys import/export`) writes it: hashes only. `keys` lists its keys;
 * earlier files had one key at the top level instead (keyHash, keyHint, createdAt, expiresAt, revokedAt), which
 * is still read when `keys` is absent. `createdAt` is the consumer's; `disabledAt` set means disabled.
 */
export interface FileConsumer {
  name: string;
  plan: PlanName;
  limits?: Limits;
  createdAt?: string;
  disabledAt?: string;
  keys?: FileKey[];
  /**
   * Billing (docs/billing.md): its own anchor and monthly quota, its credit settings; never a balance, nor the
   * period an anchor move re-cut (a fact of the fleet's counts, like the balance: an import that moves the anchor
   * re-cuts the period in progress where it is imported).
   */
  billingAnchor?: string;
  perMonth?: number;
  creditsEnabled?: boolean;
  creditRefill?: CreditRefill;
  costs?: OperationCosts;
  /** Its own alert thresholds (docs/alerts.md); null or {}: its plan's; absent: left as it is. */
  alerts?: AlertSettings | null;
  /** Where its keys and tokens may be used from (docs/oauth.md); null: anywhere; absent: left as it is. */
  allowedAddresses?: string[] | null;
  keyHash?: string;
  keyHint?: string;
  expiresAt?: string;
  revokedAt?: string;
}

export interface ImportResult {
  created: number;
  updated: number;
  unchanged: number;
}

/** What lists show of a key known only by its hash: never mistaken for a key's own first characters. */
export function hintOfHash(keyHash: string): string {
  return `sha256:${keyHash.slice(0, 8)}`;
}

/** The keys an entry of the file lists: `keys`, else the one-key form, else none. */
function keysOf(input: FileConsumer): FileKey[] {
  if (input.keys) return input.keys;
  if (input.keyHash === undefined) return [];
  return [
    {
      keyHash: input.keyHash,
      keyHint: input.keyHint,
      createdAt: input.createdAt,
      expiresAt: input.expiresAt,
      revokedAt: input.revokedAt,
    },
  ];
}

const date = (value: string | undefined): Date | undefined => (value === undefined ? undefined : dateTimeOf(value));

/** An allowedAddresses field of the file as stored (normalized); undefined when absent (left as it is). */
function addressesOf(value: string[] | null | undefined, where: string): string[] | null | undefined {
  if (value === undefined) return undefined;
  const ranges = normalizedAddressList(value);
  if (ranges === undefined) throw new ApiError('VALIDATION_FAILED', `${where}: ${ALLOWED_ADDRESSES_RULE}`);
  return ranges;
}

const sameRanges = (a: readonly string[] | null, b: readonly string[] | null): boolean =>
  a === b || (a !== null && b !== null && a.length === b.length && a.every((range, i) => range === b[i]));

/** The consumers-file format (`keys import/export`, `POST /import`, `GET /export`): hashes only, never keys. */
@Injectable()
export class ConsumersFileService {
  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    private readonly consumers: ConsumersService,
    private readonly keys: ConsumerKeysService,
    private readonly changes: ConsumerChanges,
    private readonly planLimits: PlanLimits,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /**
   * Imports consumers in the consumers-file format, idempotently, in one transaction: a consumer is matched by
   * name (created, or its plan and limits brought in line, disabled when the file says so), a key by hash (added,
   * or revoked when the file says so). Importing the same file twice changes nothing the second time; it never
   * deletes, enables or un-revokes. A hash held by another consumer, or more active keys than CONSUMER_MAX_KEYS
   * for one consumer, refuses the whole batch. Two imports of the same new names at once both succeed.
   */
  async import(context: AdminRequestContext, consumers: FileConsumer[]): Promise<ImportResult> {
    for (const c of consumers) {
      this.planLimits.check(c.plan, c.limits ?? null);
      const refill = c.creditRefill === undefined ? undefined : parseCreditRefill(c.creditRefill);
      const costs = c.costs === undefined ? undefined : parseOperationCosts(c.costs);
      if (typeof refill === 'string' || typeof costs === 'string')
        throw new ApiError(
          'VALIDATION_FAILED',
          `${c.name}: ${typeof refill === 'string' ? `creditRefill: ${refill}` : costs}`,
        );
    }
    const result: ImportResult = { created: 0, updated: 0, unchanged: 0 };
    const touched: string[] = [];
    const changedConsumers: string[] = [];
    await this.dataSource.transaction(async (manager) => {
      for (const input of consumers) {
        const limits = input.limits ?? null;
        // Insert unless the name exists (a concurrent import may be creating it: this waits for it), then lock.
        const inserted = await manager
          .createQueryBuilder()
          .insert()
          .into(ConsumerEntity)
          .values({
            id: randomUUID(),
            name: input.name,
            plan: input.plan,
            limitPerMinute: limits?.perMinute ?? null,
            limitPerDay: limits?.perDay ?? null,
            disabledAt: date(input.disabledAt) ?? null,
            ...(input.createdAt !== undefined ? { createdAt: dateTimeOf(input.createdAt) } : {}),
          })
          .orIgnore()
          .returning(['id'])
          .execute();
        const created = (inserted.raw as unknown[]).length > 0;
        const consumer = await manager.findOneOrFail(ConsumerEntity, {
          where: { name: input.name },
          lock: { mode: 'pessimistic_write' },
        });
        const before = { plan: consumer.plan, limits: limitsOf(consumer), disabled: consumer.disabledAt !== null };
        const addresses = addressesOf(input.allowedAddresses, input.name);
        const addressChanges: AuditChanges =
          addresses === undefined || sameRanges(consumer.allowedAddresses, addresses)
            ? {}
            : { allowedAddresses: { before: consumer.allowedAddresses, after: addresses } };
        let keysChanged = 0;
        let changed = false;
        if (!created && (consumer.plan !== input.plan || !sameLimits(limitsOf(consumer), limits))) {
          await manager.update(
            ConsumerEntity,
            { id: consumer.id },
            { plan: input.plan, limitPerMinute: limits?.perMinute ?? null, limitPerDay: limits?.perDay ?? null },
          );
          changed = true;
        }
        if (!created && input.disabledAt !== undefined && consumer.disabledAt === null) {
          await manager.update(ConsumerEntity, { id: consumer.id }, { disabledAt: dateTimeOf(input.disabledAt) });
          changed = true;
        }
        const billing = billingOf(input);
        const billingBefore = {
          billingAnchor: consumer.billingAnchor,
          perMonth: consumer.limitPerMonth,
          creditsEnabled: consumer.creditsEnabled,
          creditRefill: consumer.creditRefill,
          costs: consumer.creditCosts,
          alerts: consumer.alertThresholds,
        };
        const billingChanges = diff(
          billingBefore,
          Object.fromEntries(
            Object.entries(billingBefore).map(([field, value]) => [
              field,
              field in billing ? billing[field as keyof typeof billing] : value,
            ]),
          ),
        );
        // An existing consumer's anchor moved by the file is a move like PATCH /billing's: the period in progress
        // is re-cut, never started again (docs/billing.md). A consumer the file creates has no period in progress.
        const move =
          !created && billingChanges.billingAnchor && billing.billingAnchor
            ? anchorMoveOf(consumer, billing.billingAnchor, this.clock.now())
            : undefined;
        if (Object.keys(billingChanges).length > 0) {
          await manager.update(ConsumerEntity, { id: consumer.id }, { ...billingColumns(billing), ...move?.columns });
          changed = true;
        }
        if (addresses !== undefined && 'allowedAddresses' in addressChanges) {
          await manager.update(ConsumerEntity, { id: consumer.id }, { allowedAddresses: addresses });
          changed = true;
        }
        if (changed) changedConsumers.push(consumer.id);
        for (const k of keysOf(input)) {
          if (await this.importKey(manager, consumer, input.name, k)) {
            changed = true;
            keysChanged += 1;
          }
          touched.push(k.keyHash);
        }
        await this.keys.assertRoomForKeys(manager, consumer, 0);
        if (created || changed) {
          const after = {
            plan: input.plan,
            limits,
            disabled: created ? input.disabledAt !== undefined : before.disabled || input.disabledAt !== undefined,
          };
          await this.audit.record(context, manager, {
            action: created ? 'import.create' : 'import.update',
            targetConsumer: input.name,
            changes: {
              ...diff(created ? {} : before, after),
              ...billingChanges,
              ...addressChanges,
              ...move?.changes,
              ...(keysChanged
                ? { keys: { before: null, after: `${keysChanged} added, revoked or re-addressed` } }
                : {}),
            },
          });
        }
        if (created) result.created += 1;
        else if (changed) result.updated += 1;
        else result.unchanged += 1;
      }
    });
    await this.changes.publish({ keyHashes: touched, consumerIds: changedConsumers });
    return result;
  }

  /** Adds a key (or revokes it, or sets where it may be used from, as the file says); whether anything changed. */
  private async importKey(
    manager: EntityManager,
    consumer: ConsumerEntity,
    name: string,
    k: FileKey,
  ): Promise<boolean> {
    const addresses = addressesOf(k.allowedAddresses, `${name}: key ${k.keyHint ?? hintOfHash(k.keyHash)}`);
    // Insert unless the hash exists (a concurrent import may be adding it: this waits for it).
    const inserted = await manager
      .createQueryBuilder()
      .insert()
      .into(ApiKeyEntity)
      .values({
        id: randomUUID(),
        consumerId: consumer.id,
        keyHash: k.keyHash,
        hint: k.keyHint ?? hintOfHash(k.keyHash),
        ...(k.createdAt !== undefined ? { createdAt: dateTimeOf(k.createdAt) } : {}),
        expiresAt: date(k.expiresAt) ?? null,
        revokedAt: date(k.revokedAt) ?? null,
        replacedBy: null,
        allowedAddresses: addresses ?? null,
      })
      .orIgnore()
      .returning(['id'])
      .execute();
    if ((inserted.raw as unknown[]).length > 0) return true;
    const existing = await manager.findOneByOrFail(ApiKeyEntity, { keyHash: k.keyHash });
    if (existing.consumerId !== consumer.id)
      throw new ApiError(
        'KEY_OF_ANOTHER_CONSUMER',
        `Key ${k.keyHint ?? hintOfHash(k.keyHash)} of "${name}" belongs to another consumer.`,
      );
    const revoke = k.revokedAt !== undefined && existing.revokedAt === null;
    const readdress = addresses !== undefined && !sameRanges(existing.allowedAddresses, addresses);
    if (!revoke && !readdress) return false;
    await manager.update(
      ApiKeyEntity,
      { id: existing.id },
      {
        ...(revoke ? { revokedAt: dateTimeOf(k.revokedAt!) } : {}),
        ...(readdress ? { allowedAddresses: addresses } : {}),
      },
    );
    return true;
  }

  /** One page of the consumers-file format (hashes only), in name order: every field, so that it imports back as it was. */
  async export(
    actor: AdminActor,
    limit: number,
    after?: string,
  ): Promise<{ consumers: FileConsumer[]; next: string | null }> {
    const page = await this.consumers.list(actor, limit, after);
    const consumers = page.items.map(({ consumer, keys }): FileConsumer => {
      const current = [...keys].reverse().find((k) => k.revokedAt === null) ?? keys[keys.length - 1];
      const limits = limitsOf(consumer);
      return {
        name: consumer.name,
        plan: consumer.plan,
        ...(limits ? { limits } : {}),
        createdAt: consumer.createdAt.toISOString(),
        ...(consumer.disabledAt ? { disabledAt: consumer.disabledAt.toISOString() } : {}),
        ...(consumer.billingAnchor ? { billingAnchor: consumer.billingAnchor.toISOString() } : {}),
        ...(consumer.limitPerMonth !== null ? { perMonth: consumer.limitPerMonth } : {}),
        ...(consumer.creditsEnabled !== null ? { creditsEnabled: consumer.creditsEnabled } : {}),
        ...(consumer.creditRefill ? { creditRefill: consumer.creditRefill } : {}),
        ...(consumer.creditCosts ? { costs: consumer.creditCosts } : {}),
        ...(consumer.alertThresholds ? { alerts: consumer.alertThresholds } : {}),
        ...(consumer.allowedAddresses ? { allowedAddresses: consumer.allowedAddresses } : {}),
        // The one-key form too, for the importers of earlier versions (ignored where `keys` is read).
        ...(current
          ? {
              keyHash: current.keyHash,
              keyHint: current.hint,
              ...(current.revokedAt ? { revokedAt: current.revokedAt.toISOString() } : {}),
            }
          : {}),
        keys: keys.map((k) => ({
          keyHash: k.keyHash,
          keyHint: k.hint,
          createdAt: k.createdAt.toISOString(),
          ...(k.expiresAt ? { expiresAt: k.expiresAt.toISOString() } : {}),
          ...(k.revokedAt ? { revokedAt: k.revokedAt.toISOString() } : {}),
          ...(k.allowedAddresses ? { allowedAddresses: k.allowedAddresses } : {}),
        })),
      };
    });
    return { consumers, next: page.next };
  }
}

/** The billing fields a file consumer gives (absent ones are left as they are). */
function billingOf(input: FileConsumer): {
  billingAnchor?: Date;
  perMonth?: number;
  creditsEnabled?: boolean;
  creditRefill?: CreditRefill;
  costs?: OperationCosts;
  alerts?: AlertSettings | null;
} {
  return {
    ...(input.billingAnchor !== undefined ? { billingAnchor: dateTimeOf(input.billingAnchor) } : {}),
    ...(input.perMonth !== undefined ? { perMonth: input.perMonth } : {}),
    ...(input.creditsEnabled !== undefined ? { creditsEnabled: input.creditsEnabled } : {}),
    ...(input.creditRefill !== undefined ? { creditRefill: input.creditRefill } : {}),
    ...(input.costs !== undefined ? { costs: input.costs } : {}),
    // As the billing route stores them: {} is null, the keys in jsonb's order (an unchanged value diffs as unchanged).
    ...(input.alerts !== undefined ? { alerts: alertSettingsOf(input.alerts) } : {}),
  };
}

function billingColumns(billing: ReturnType<typeof billingOf>): Partial<ConsumerEntity> {
  return {
    ...(billing.billingAnchor !== undefined ? { billingAnchor: billing.billingAnchor } : {}),
    ...(billing.perMonth !== undefined ? { limitPerMonth: billing.perMonth } : {}),
    ...(billing.creditsEnabled !== undefined ? { creditsEnabled: billing.creditsEnabled } : {}),
    ...(billing.creditRefill !== undefined ? { creditRefill: billing.creditRefill } : {}),
    ...(billing.costs !== undefined ? { creditCosts: billing.costs } : {}),
    ...(billing.alerts !== undefined ? { alertThresholds: billing.alerts } : {}),
  };
}

function sameLimits(a: Limits | null, b: Limits | null): boolean {
  return a === b || (a !== null && b !== null && a.perMinute === b.perMinute && a.perDay === b.perDay);
}
