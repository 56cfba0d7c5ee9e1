import { statSync } from 'node:fs';
import { ConfigurationError } from '@app/platform';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { hashApiKey, isWellFormedApiKey, sameHash } from './api-key';
import { Consumer } from './consumer';
import { ConsumersFile, readConsumersFile } from './consumers-file';
import { PlanTable } from './plans';

export const PLAN_TABLE = Symbol('PLAN_TABLE');

interface Entry {
  keyHash: string;
  consumer: Consumer;
}

/**
 * The active consumers, keyed by key hash. The file is polled (a stat a second by default), so every gateway
 * instance sees a new or revoked key within CONSUMERS_RELOAD_MS + a read; a broken file keeps the last good set.
 */
@Injectable()
export class ConsumerRegistry implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Consumers');
  private byHash = new Map<string, Entry>();
  private lastSeen = '';
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(PLAN_TABLE) private readonly plans: PlanTable,
  ) {}

  onModuleInit(): void {
    try {
      this.reload(true);
    } catch (error) {
      throw new ConfigurationError(`CONSUMERS_FILE ${this.config.consumersFile}: ${(error as Error).message}`);
    }
    this.timer = setInterval(() => this.poll(), this.config.consumersReloadMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** The consumer a key belongs to, or undefined for a malformed, unknown or revoked key. */
  authenticate(key: string): Consumer | undefined {
    if (!isWellFormedApiKey(key)) return undefined;
    const hash = hashApiKey(key);
    const entry = this.byHash.get(hash);
    return entry && sameHash(entry.keyHash, hash) ? entry.consumer : undefined;
  }

  get size(): number {
    return this.byHash.size;
  }

  /** Re-reads the file now (also used after the demo key is minted). */
  reload(force = false): void {
    const signature = this.signature();
    if (!force && signature === this.lastSeen) return;
    const file = readConsumersFile(this.config.consumersFile, this.plans);
    this.lastSeen = signature;
    this.byHash = this.index(file);
    this.logger.log(`Loaded ${this.byHash.size} active consumer(s) from ${this.config.consumersFile}`);
  }

  private poll(): void {
    try {
      this.reload();
    } catch (error) {
      // Remember the broken version so that the error is logged once, not every second.
      this.lastSeen = this.signature();
      this.logger.error(
        `Ignoring ${this.config.consumersFile}: ${(error as Error).message}. Keeping the last good ${this.byHash.size} consumer(s).`,
      );
    }
  }

  private signature(): string {
    try {
      const stat = statSync(this.config.consumersFile);
      return `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      return 'missing';
    }
  }

  private index(file: ConsumersFile): Map<string, Entry> {
    const map = new Map<string, Entry>();
    for (const stored of file.consumers) {
      if (stored.revokedAt) continue;
      const plan = this.plans[stored.plan];
      const limits = stored.limits ?? (plan === 'custom' ? undefined : plan);
      if (!limits) continue;
      map.set(stored.keyHash, { keyHash: stored.keyHash, consumer: { name: stored.name, plan: stored.plan, limits } });
    }
    return map;
  }
}
