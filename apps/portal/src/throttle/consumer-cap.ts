import { AppMetrics } from '@app/platform';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import { Counter, Gauge } from 'prom-client';
import { PORTAL_CONFIG, PortalConfig } from '../config/portal.config';
import { PORTAL_POOL } from './sign-in-attempts';

const HOUR_MS = 60 * 60 * 1000;

/** A claim's answer: a consumer may be made now, or not before `retryAt` (the end of its block's hour). */
export type ConsumerClaim = { granted: true } | { granted: false; retryAt: Date };

/**
 * New gateway consumers (one per verified account) per address block and hour, all instances together (rows of the
 * `throttle` table, one atomic upsert per claim). The cap is the block's own (PORTAL_CONSUMERS_PER_BLOCK_PER_HOUR):
 * sign-ups from other blocks, however many, never spend it, so a flood from many IPv6 /64s cannot keep a developer
 * from getting a key (issue #45: a fleet-wide cap could be spent by three /64s and locked everyone out). The fleet's
 * count per hour (PORTAL_CONSUMERS_PER_HOUR) is an alarm to operators, not a refusal: past it, one warn line per hour
 * (`portal.consumer-cap.alarm`) and the metrics (`portal_new_keys_total`, `portal_consumers_created_fleet_hour`,
 * `portal_consumer_cap_alarms_total`). Both windows are fixed (they start with the first claim after the last one
 * ended).
 */
@Injectable()
export class ConsumerCap {
  private readonly logger = new Logger('Accounts');
  private readonly keys: Counter<'outcome'>;
  private readonly fleetHour: Gauge;
  private readonly alarms: Counter;

  constructor(
    @Inject(PORTAL_POOL) private readonly pool: Pool,
    @Inject(PORTAL_CONFIG) private readonly config: PortalConfig,
    metrics: AppMetrics,
  ) {
    const registers = [metrics.registry];
    this.keys = new Counter({
      name: 'portal_new_keys_total',
      help: "Claims of a verified account's first key by this instance: created, or deferred (its address block's hourly cap).",
      labelNames: ['outcome'],
      registers,
    });
    this.fleetHour = new Gauge({
      name: 'portal_consumers_created_fleet_hour',
      help: 'Consumers all portal instances created in the current hour, as this instance last counted them (alarm past PORTAL_CONSUMERS_PER_HOUR).',
      registers,
    });
    this.alarms = new Counter({
      name: 'portal_consumer_cap_alarms_total',
      help: 'Hours in which the fleet passed PORTAL_CONSUMERS_PER_HOUR new consumers (counted by the instance that passed it).',
      registers,
    });
  }

  /** Counts one claim under `key` (a fixed window of an hour): the count in the window and the window's end. */
  private async count(key: string): Promise<{ hits: number; expiresAt: Date }> {
    const { rows } = await this.pool.query<{ hits: number; expires_at: Date }>(
      `INSERT INTO "${this.config.schema}"."throttle" AS t ("key", "hits", "expires_at")
         VALUES ($1, 1, now() + $2 * interval '1 millisecond')
       ON CONFLICT ("key") DO UPDATE SET
         "hits" = CASE WHEN t."expires_at" <= now() THEN 1 ELSE t."hits" + 1 END,
         "expires_at" = CASE WHEN t."expires_at" <= now() THEN now() + $2 * interval '1 millisecond' ELSE t."expires_at" END
       RETURNING "hits", "expires_at"`,
      [key, HOUR_MS],
    );
    return { hits: rows[0].hits, expiresAt: new Date(rows[0].expires_at) };
  }

  /**
   * Takes one of this hour's consumers of `block` (the address block the request came from); when the block's are
   * all taken, answers when the next one can be had (a refusal is logged). A granted claim also counts for the fleet.
   */
  async claim(block: string): Promise<ConsumerClaim> {
    const { consumersPerBlockPerHour: perBlock, consumersPerHour: alarmAt } = this.config;
    const own = await this.count(`consumers-created:${block}`);
    if (own.hits > perBlock) {
      this.logger.warn({
        event: 'portal.consumer-cap.reached',
        address: block,
        consumersPerBlockPerHour: perBlock,
        retryAt: own.expiresAt.toISOString(),
      });
      this.keys.inc({ outcome: 'deferred' });
      return { granted: false, retryAt: own.expiresAt };
    }
    const fleet = await this.count('consumers-created');
    this.keys.inc({ outcome: 'created' });
    this.fleetHour.set(fleet.hits);
    // Once per hour, at the crossing: every instance counts in the one row, so exactly one claim sees alarmAt + 1.
    if (fleet.hits === alarmAt + 1) {
      this.alarms.inc();
      this.logger.warn({
        event: 'portal.consumer-cap.alarm',
        consumersPerHour: alarmAt,
        address: block,
        windowEndsAt: fleet.expiresAt.toISOString(),
      });
    }
    return { granted: true };
  }

  /** When `block` may have its next consumer: now (undefined) or the end of its hour. */
  async nextFor(block: string): Promise<Date | undefined> {
    const { rows } = await this.pool.query<{ hits: number; expires_at: Date }>(
      `SELECT "hits", "expires_at" FROM "${this.config.schema}"."throttle" WHERE "key" = $1 AND "expires_at" > now()`,
      [`consumers-created:${block}`],
    );
    return rows[0] && rows[0].hits >= this.config.consumersPerBlockPerHour ? new Date(rows[0].expires_at) : undefined;
  }
}
