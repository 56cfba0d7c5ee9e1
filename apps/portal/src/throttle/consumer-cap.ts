import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import { PORTAL_CONFIG, PortalConfig } from '../config/portal.config';
import { PORTAL_POOL } from './sign-in-attempts';

const HOUR_MS = 60 * 60 * 1000;

/**
 * At most PORTAL_CONSUMERS_PER_HOUR gateway consumers created by the portal per hour, all instances together (one
 * row of the `throttle` table, one atomic upsert per claim): a flood of verified sign-ups cannot fill the gateway
 * with Free consumers and keys. The window is fixed (it starts with the first claim after the last one ended).
 */
@Injectable()
export class ConsumerCap {
  private readonly logger = new Logger('Accounts');

  constructor(
    @Inject(PORTAL_POOL) private readonly pool: Pool,
    @Inject(PORTAL_CONFIG) private readonly config: PortalConfig,
  ) {}

  /** Takes one of this hour's consumers; false when the hour's are all taken (then a refusal is logged). */
  async claim(): Promise<boolean> {
    const cap = this.config.consumersPerHour;
    const { rows } = await this.pool.query<{ hits: number }>(
      `INSERT INTO "${this.config.schema}"."throttle" AS t ("key", "hits", "expires_at")
         VALUES ('consumers-created', 1, now() + $1 * interval '1 millisecond')
       ON CONFLICT ("key") DO UPDATE SET
         "hits" = CASE WHEN t."expires_at" <= now() THEN 1 ELSE t."hits" + 1 END,
         "expires_at" = CASE WHEN t."expires_at" <= now() THEN now() + $1 * interval '1 millisecond' ELSE t."expires_at" END
       RETURNING "hits"`,
      [HOUR_MS],
    );
    if (rows[0].hits <= cap) return true;
    this.logger.warn({ event: 'portal.consumer-cap.reached', consumersPerHour: cap });
    return false;
  }
}
