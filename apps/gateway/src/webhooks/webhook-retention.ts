import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { FleetLeases } from '../alerts/fleet-leases';
import { ThresholdEventsRepository } from '../alerts/threshold-events.repository';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';

/** The lease one instance of the fleet holds to prune (FleetLeases). */
export const RETENTION_LEASE = 'webhook-retention';
/** How often the holder prunes: retention is counted in days, an hour late is nothing. */
const RETENTION_EVERY_MS = 3_600_000;
/** Rows per delete: each a short statement, so that pruning a backlog never holds locks for long. */
const PRUNE_BATCH = 1_000;
const DAY_MS = 86_400_000;

/** What one pruning deleted. */
export interface Pruned {
  deliveries: number;
  messages: number;
  events: number;
}

/**
 * Retention of the webhooks' and the alerts' tables (docs/webhooks.md and docs/alerts.md, "Retention"): every hour
 * the instance holding the fleet's `webhook-retention` lease deletes, in batches, the finished deliveries and their
 * attempts older than WEBHOOK_RETENTION_DAYS, then the fanned-out outbox messages no delivery refers to any longer,
 * then the threshold events ALERT_EVENT_RETENTION_DAYS after their period ended (never one whose period is current).
 * Here, above both rooms: the messages go after their deliveries. Off the request path.
 */
@Injectable()
export class WebhookRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookRetention');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly events: ThresholdEventsRepository,
    private readonly leases: FleetLeases,
    private readonly clock: Clock,
  ) {}

  /** One pruning at `nowMs` (the gateway's clock), every batch until none is full: what it deleted. */
  async prune(nowMs: number = this.clock.now()): Promise<Pruned> {
    const until = async (step: () => Promise<number>) => {
      let total = 0;
      for (let deleted = PRUNE_BATCH; deleted === PRUNE_BATCH; total += deleted) deleted = await step();
      return total;
    };
    const webhookCutoff = nowMs - this.config.webhooks.retentionDays * DAY_MS;
    const eventCutoff = nowMs - this.config.alerts.eventRetentionDays * DAY_MS;
    return {
      deliveries: await until(() => this.deliveries.pruneDeliveries(webhookCutoff, PRUNE_BATCH)),
      messages: await until(() => this.deliveries.pruneMessages(webhookCutoff, PRUNE_BATCH)),
      events: await until(() => this.events.pruneEvents(eventCutoff, PRUNE_BATCH)),
    };
  }

  /** The periodic run: only the lease's holder prunes (two intervals long, renewed at each of its runs). */
  async pruneIfHolder(): Promise<Pruned | undefined> {
    if (!(await this.leases.acquire(RETENTION_LEASE, 2 * RETENTION_EVERY_MS))) return undefined;
    return this.prune();
  }

  /** First within one interval of the start (instances started together do not all try at once). */
  onApplicationBootstrap(): void {
    const run = () => {
      this.running ??= this.pruneIfHolder()
        .then((pruned) => {
          if (pruned && pruned.deliveries + pruned.messages + pruned.events > 0)
            this.logger.log(
              `Pruned ${pruned.deliveries} deliveries, ${pruned.messages} outbox messages, ${pruned.events} threshold events.`,
            );
        })
        .catch((error: Error) => this.logger.warn(`Pruning failed: ${error.message}`))
        .finally(() => (this.running = undefined));
    };
    this.timer = setTimeout(() => {
      run();
      this.timer = setInterval(run, RETENTION_EVERY_MS);
      this.timer.unref();
    }, Math.random() * RETENTION_EVERY_MS);
    this.timer.unref();
  }

  /** Stops, and hands the lease over at once (a dead instance's expires). */
  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.timer);
    clearInterval(this.timer);
    await this.running;
    await this.leases
      .release(RETENTION_LEASE)
      .catch((error: Error) => this.logger.warn(`Retention lease not released: ${error.message}`));
  }
}
