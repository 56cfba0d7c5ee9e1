import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ApiError } from '@app/errors';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, LessThan } from 'typeorm';
import { Clock } from '../clock';
import { GATEWAY_DATA_SOURCE, schemaOf } from '../database/data-source.options';
import { AdminActor, AdminRequestContext, ROOT_ACTOR } from './admin-context';
import { assertMayGrant, grantRefusal, seesOnlyOwnTokens } from './admin-policy';
import { AdminScope } from './admin-scopes';
import { AdminTokenEntity } from './admin-token.entity';
import { AuditLog } from './audit-log';
import { UsedIdTokenEntity } from './used-id-token.entity';

export const ADMIN_TOKEN_PREFIX = 'adm_';

/**
 * How long an instance trusts what it read of a token: a revocation or an expiry (checked on every call, cached
 * or not) reaches every instance within this, without a message.
 */
export const TOKEN_CACHE_TTL_MS = 500;
/** `last_used_at` is written at most this often per token and instance. */
const LAST_USED_EVERY_MS = 60_000;

export function hashAdminToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface NewAdminToken {
  name: string;
  scopes: AdminScope[];
  expiresAt?: Date;
  ownConsumersOnly?: boolean;
  plans?: string[];
  actsForUsers?: boolean;
}

/** Scoped admin tokens: created (shown once), listed (no secrets), revoked; and resolved on every admin call. */
@Injectable()
export class AdminTokensService {
  private readonly cache = new Map<string, { entity: AdminTokenEntity | null; until: number }>();
  private readonly lastUsedWritten = new Map<string, number>();

  constructor(
    @InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  async create(
    context: AdminRequestContext,
    input: NewAdminToken,
  ): Promise<{ token: string; record: AdminTokenEntity }> {
    const { actor } = context;
    // No escalation (admin-policy.ts): a child never outranks nor outlives its creator; without an expiry of its
    // own it expires with its creator.
    const grant = {
      scopes: input.scopes,
      ownConsumersOnly: input.ownConsumersOnly ?? false,
      plans: input.plans ?? null,
      expiresAt: input.expiresAt ?? actor.expiresAt ?? null,
    };
    assertMayGrant(actor, grant);
    // Naming the people behind calls is vouching for them: only root hands that to a web app's token.
    if (input.actsForUsers === true && actor !== ROOT_ACTOR)
      throw new ApiError('FORBIDDEN', `Only the root token may create a token that acts for users (actsForUsers).`);
    const token = ADMIN_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const record = await this.dataSource.transaction(async (manager) => {
      // The creator's row locked and still valid: a child cannot slip in beside its creator's revocation.
      if (actor.id !== null) {
        const creator = await manager.findOne(AdminTokenEntity, {
          where: { id: actor.id },
          lock: { mode: 'pessimistic_write' },
        });
        if (!creator || creator.revokedAt !== null)
          throw new ApiError('UNAUTHORIZED', `Token "${actor.name}" was revoked.`);
      }
      const entity = manager.create(AdminTokenEntity, {
        id: randomUUID(),
        name: input.name,
        tokenHash: hashAdminToken(token),
        hint: `${token.slice(0, ADMIN_TOKEN_PREFIX.length + 4)}…`,
        scopes: input.scopes,
        ownConsumersOnly: grant.ownConsumersOnly,
        plans: grant.plans,
        actsForUsers: input.actsForUsers ?? false,
        createdBy: actor.id === null ? actor.name : `${actor.name} (${actor.id})`,
        createdByToken: actor.id,
        expiresAt: grant.expiresAt,
        lastUsedAt: null,
        revokedAt: null,
      });
      await manager.insert(AdminTokenEntity, entity);
      const saved = await manager.findOneByOrFail(AdminTokenEntity, { id: entity.id });
      await this.audit.record(context, manager, {
        action: 'token.create',
        targetToken: saved.id,
        changes: {
          name: { before: null, after: saved.name },
          scopes: { before: null, after: saved.scopes },
          ownConsumersOnly: { before: null, after: saved.ownConsumersOnly },
          plans: { before: null, after: saved.plans },
          actsForUsers: { before: null, after: saved.actsForUsers },
          expiresAt: { before: null, after: saved.expiresAt?.toISOString() ?? null },
        },
      });
      return saved;
    });
    return { token, record };
  }

  /**
   * A person's session credential (docs/sso.md), issued for a verified ID token: the token's hash is kept so that the
   * ID token is exchanged once (a replay: 401), the admin token is named for the person and expires with the session,
   * and the `user.sign-in` row, written by the new token, names the person: all in one transaction.
   */
  async issueForPerson(
    origin: Omit<AdminRequestContext, 'actor' | 'endUser'>,
    input: {
      person: string;
      name: string;
      scopes: AdminScope[];
      plans: string[] | null;
      expiresAt: Date;
      idTokenHash: string;
      idTokenUsableUntil: Date;
      address: string | null;
    },
  ): Promise<{ token: string; record: AdminTokenEntity }> {
    const token = ADMIN_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    return this.dataSource.transaction(async (manager) => {
      const taken = await manager
        .createQueryBuilder()
        .insert()
        .into(UsedIdTokenEntity)
        .values({ tokenHash: input.idTokenHash, expiresAt: input.idTokenUsableUntil })
        .orIgnore()
        .returning(['tokenHash'])
        .execute();
      if ((taken.raw as unknown[]).length === 0)
        throw new ApiError('UNAUTHORIZED', 'This ID token was already exchanged: sign in again at the provider.');
      // Forgotten once they could not be taken anyway: the table holds at most a few minutes of sign-ins.
      await manager.delete(UsedIdTokenEntity, { expiresAt: LessThan(new Date(this.clock.now())) });
      const entity = manager.create(AdminTokenEntity, {
        id: randomUUID(),
        name: input.name,
        tokenHash: hashAdminToken(token),
        hint: `${token.slice(0, ADMIN_TOKEN_PREFIX.length + 4)}…`,
        scopes: input.scopes,
        ownConsumersOnly: false,
        plans: input.plans,
        actsForUsers: false,
        createdBy: 'sign-in',
        createdByToken: null,
        expiresAt: input.expiresAt,
        lastUsedAt: null,
        revokedAt: null,
        person: input.person,
      });
      await manager.insert(AdminTokenEntity, entity);
      const record = await manager.findOneByOrFail(AdminTokenEntity, { id: entity.id });
      const actor: AdminActor = {
        id: record.id,
        name: record.name,
        scopes: input.scopes,
        ownConsumersOnly: false,
        plans: record.plans,
        expiresAt: record.expiresAt,
        person: record.person,
      };
      await this.audit.record(
        { ...origin, actor, endUser: { onBehalfOf: input.person, address: input.address } },
        manager,
        {
          action: 'user.sign-in',
          targetToken: record.id,
          changes: {
            scopes: { before: null, after: record.scopes },
            plans: { before: null, after: record.plans },
            expiresAt: { before: null, after: record.expiresAt!.toISOString() },
          },
        },
      );
      return { token, record };
    });
  }

  /**
   * Ends the calling person's session (their sign-out): the token is revoked on every instance within a second and
   * a `user.sign-out` row names them. 403 for a token that is no person's session (revoke it with its id instead).
   */
  async endPersonSession(context: AdminRequestContext, address: string | null): Promise<void> {
    const { actor } = context;
    if (!actor.person || actor.id === null)
      throw new ApiError('FORBIDDEN', `Token "${actor.name}" is no person's session: revoke it by its id instead.`);
    await this.dataSource.transaction(async (manager) => {
      await manager.update(AdminTokenEntity, { id: actor.id!, revokedAt: IsNull() }, { revokedAt: () => 'now()' });
      await this.audit.record({ ...context, endUser: { onBehalfOf: actor.person!, address } }, manager, {
        action: 'user.sign-out',
        targetToken: actor.id,
      });
    });
    this.cache.clear();
  }

  /** Every token; a restricted token's list holds only the tokens it created. */
  list(actor: AdminActor): Promise<AdminTokenEntity[]> {
    return this.dataSource.getRepository(AdminTokenEntity).find({
      where: seesOnlyOwnTokens(actor) ? { createdByToken: actor.id ?? '' } : {},
      order: { createdAt: 'ASC' },
    });
  }

  /**
   * Revokes a token the actor could have created (403 otherwise; 404 for a token a restricted actor does not see),
   * and every token created under it, at any depth: a child dies with its creator. Idempotent: an already revoked
   * token is returned as it is.
   */
  async revoke(context: AdminRequestContext, id: string): Promise<AdminTokenEntity> {
    const { actor } = context;
    return this.dataSource.transaction(async (manager) => {
      const token = await manager.findOne(AdminTokenEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
      if (!token || (seesOnlyOwnTokens(actor) && token.createdByToken !== actor.id))
        throw new ApiError('NOT_FOUND', `No admin token ${id}.`);
      const refusal = grantRefusal(actor, token);
      if (refusal !== null)
        throw new ApiError(
          'FORBIDDEN',
          `Token "${actor.name}" may revoke only a token it could have created: ${refusal}`,
        );
      if (token.revokedAt !== null) return token;
      const descendants = (await manager.query(
        `WITH RECURSIVE tree AS (SELECT "id" FROM ${this.table()} WHERE "created_by_token" = $1 ` +
          `UNION SELECT t."id" FROM ${this.table()} t JOIN tree ON t."created_by_token" = tree."id") ` +
          `UPDATE ${this.table()} SET "revoked_at" = now() WHERE "id" IN (SELECT "id" FROM tree) AND "revoked_at" IS NULL RETURNING "id"`,
        [id],
      )) as [Array<{ id: string }>, number] | Array<{ id: string }>;
      const cascaded = (Array.isArray(descendants[0]) ? descendants[0] : descendants) as Array<{ id: string }>;
      await manager.update(AdminTokenEntity, { id }, { revokedAt: () => 'now()' });
      const revoked = await manager.findOneByOrFail(AdminTokenEntity, { id });
      await this.audit.record(context, manager, {
        action: 'token.revoke',
        targetToken: id,
        changes: {
          revokedAt: { before: null, after: revoked.revokedAt!.toISOString() },
          ...(cascaded.length > 0 ? { descendants: { before: null, after: cascaded.map((t) => t.id) } } : {}),
        },
      });
      return revoked;
    });
  }

  private table(): string {
    return `"${schemaOf(this.dataSource)}"."admin_tokens"`;
  }

  /** The actor a presented `adm_…` token stands for, or undefined (unknown, revoked, expired). */
  async authenticate(token: string, now = this.clock.now()): Promise<AdminActor | undefined> {
    const hash = hashAdminToken(token);
    let cached = this.cache.get(hash);
    if (!cached || cached.until <= now) {
      const entity = await this.dataSource.getRepository(AdminTokenEntity).findOneBy({ tokenHash: hash });
      cached = { entity, until: now + TOKEN_CACHE_TTL_MS };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, cached);
    }
    const entity = cached.entity;
    if (!entity || entity.revokedAt !== null || (entity.expiresAt !== null && entity.expiresAt.getTime() <= now))
      return undefined;
    this.touch(entity, now);
    return {
      id: entity.id,
      name: entity.name,
      scopes: entity.scopes as AdminScope[],
      ownConsumersOnly: entity.ownConsumersOnly,
      plans: entity.plans,
      expiresAt: entity.expiresAt,
      actsForUsers: entity.actsForUsers,
      person: entity.person,
    };
  }

  private touch(entity: AdminTokenEntity, now: number): void {
    const last = this.lastUsedWritten.get(entity.id) ?? entity.lastUsedAt?.getTime() ?? 0;
    if (now - last < LAST_USED_EVERY_MS) return;
    this.lastUsedWritten.set(entity.id, now);
    this.dataSource
      .query(
        `UPDATE "${schemaOf(this.dataSource)}"."admin_tokens" SET "last_used_at" = now() WHERE "id" = $1 AND ("last_used_at" IS NULL OR "last_used_at" < now() - interval '1 minute')`,
        [entity.id],
      )
      .catch(() => this.lastUsedWritten.delete(entity.id));
  }
}
