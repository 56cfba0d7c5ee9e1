import { ThrottlerStorage } from '@nestjs/throttler';

/** What ThrottlerStorage.increment answers (the package does not export the record type from its entry point). */
type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;
import type { Pool } from 'pg';

/**
 * @nestjs/throttler's counters in the portal's PostgreSQL (`<schema>.throttle`), not in each process's memory: an
 * attacker spreading sign-in guesses over the instances behind nginx meets one count, and a restart forgets nothing.
 * PostgreSQL rather than Redis because the portal already depends on it (sessions, accounts) and Redis is optional
 * in this project; the rate is that of sign-in forms (a few writes a second at most), which one upsert serves.
 */
export class PostgresThrottlerStorage implements ThrottlerStorage {
  constructor(
    private readonly pool: Pool,
    private readonly schema: string,
  ) {}

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const table = `"${this.schema}"."throttle"`;
    // One statement: a window that has run out (and no block left) starts again at 1; a count past the limit blocks
    // for blockDuration. Concurrent increments of one key serialise on its row.
    const { rows } = await this.pool.query<{ hits: number; expires_in: number; blocked_in: number | null }>(
      `INSERT INTO ${table} AS t ("key", "hits", "expires_at", "blocked_until")
         VALUES ($1, 1, now() + $2 * interval '1 millisecond', CASE WHEN 1 > $3 THEN now() + $4 * interval '1 millisecond' END)
       ON CONFLICT ("key") DO UPDATE SET
         "hits" = CASE WHEN t."expires_at" <= now() AND COALESCE(t."blocked_until" <= now(), true) THEN 1 ELSE t."hits" + 1 END,
         "expires_at" = CASE WHEN t."expires_at" <= now() AND COALESCE(t."blocked_until" <= now(), true) THEN now() + $2 * interval '1 millisecond' ELSE t."expires_at" END,
         "blocked_until" = CASE
           WHEN t."blocked_until" > now() THEN t."blocked_until"
           WHEN (CASE WHEN t."expires_at" <= now() THEN 1 ELSE t."hits" + 1 END) > $3 THEN now() + $4 * interval '1 millisecond'
           ELSE NULL END
       RETURNING "hits",
         GREATEST(0, CEIL(EXTRACT(EPOCH FROM ("expires_at" - now()))))::int AS expires_in,
         CASE WHEN "blocked_until" > now() THEN GREATEST(1, CEIL(EXTRACT(EPOCH FROM ("blocked_until" - now()))))::int END AS blocked_in`,
      [`${throttlerName}:${key}`, ttl, limit, blockDuration],
    );
    if (Math.random() < 0.01)
      void this.pool
        .query(
          `DELETE FROM ${table} WHERE "expires_at" < now() - interval '1 day' AND COALESCE("blocked_until" < now(), true)`,
        )
        .catch(() => undefined);
    const row = rows[0];
    return {
      totalHits: row.hits,
      timeToExpire: row.expires_in,
      isBlocked: row.blocked_in !== null,
      timeToBlockExpire: row.blocked_in ?? 0,
    };
  }
}
