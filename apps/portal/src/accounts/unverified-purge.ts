import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { PORTAL_CONFIG, PortalConfig } from '../config/portal.config';
import { AccountsService } from './accounts.service';

/** How often each instance deletes the unverified accounts past PORTAL_UNVERIFIED_MAX_AGE_HOURS. */
export const PURGE_EVERY_MS = 60 * 60 * 1000;

/**
 * Deletes unverified accounts older than PORTAL_UNVERIFIED_MAX_AGE_HOURS: once at start, then every hour, on every
 * instance (one DELETE each: running it twice deletes nothing more). The timer is unref'd (it never keeps the
 * process alive) and stopped when the app closes, before the database is.
 */
@Injectable()
export class UnverifiedPurge implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Accounts');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly accounts: AccountsService,
    @Inject(PORTAL_CONFIG) private readonly config: PortalConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.runOnce(), PURGE_EVERY_MS);
    this.timer.unref();
    void this.runOnce();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One purge (a failure is logged; the next run tries again). */
  runOnce(): Promise<void> {
    this.running ??= this.accounts
      .purgeUnverified(this.config.unverifiedMaxAgeMs)
      .then((count) => {
        if (count > 0) this.logger.log(`Deleted ${count} unverified account(s) older than the configured age.`);
      })
      .catch((error: Error) => this.logger.warn(`Purging unverified accounts failed: ${error.message}`))
      .finally(() => (this.running = undefined));
    return this.running;
  }
}
