import { randomUUID } from 'node:crypto';
import { OutboundClient } from '@app/outbound';
import { AppMetrics } from '@app/platform';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Counter } from 'prom-client';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import type { UsageExportConfig } from '../config/usage-export.config';
import { retryDelayMs } from './export-backoff';
import { stripeSendDecision } from './stripe-replay-window';
import { aggregateId, exportableUntil } from './usage-aggregate';
import { UsageAggregatesRepository } from './usage-aggregates.repository';
import { LeaseLost, NewBatch, OutboxBatch, UsageExportOutbox } from './usage-export-outbox';
import { usageExportRequests } from './usage-export-requests';

/** The lease's length: far longer than one attempt (10 s at most), renewed before each. */
const MIN_LEASE_MS = 30_000;
/** The time one attempt may take, connection and answer included. */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** usage_minutely rows read per fill (at most four aggregates each), and fills per tick. */
const ROWS_PER_FILL = 1_000;
const FILLS_PER_TICK = 20;
/** Attempts per tick, at most (the next tick goes on). */
const SENDS_PER_TICK = 200;
/** Acknowledged batches are kept this long (as a record; their bodies are dropped at once). */
const ACKNOWLEDGED_KEPT_DAYS = 7;
const PRUNE_EVERY_MS = 3_600_000;

/** What an attempt came to, as the exporter acts on it. */
type AttemptOutcome = 'acknowledged' | 'refused' | 'unreachable';

/**
 * The usage export's delivery (issue #49 point 4, docs/usage-export.md). Every USAGE_EVENTS_INTERVAL_MS, the
 * instance holding the lease (one in the fleet) fills the outbox from usage_minutely's settled minutes after
 * its position (formatted once, in the configured format, in the transaction that moves the position), then sends
 * the due batches in order to USAGE_EVENTS_URL through the OutboundClient: a 2xx acknowledges one; a failure is
 * retried with backoff (USAGE_EVENTS_INTERVAL_MS doubling up to USAGE_EVENTS_RETRY_MAX_MS); a receiver that
 * cannot be reached (no answer, 5xx, 408, 429) stops the sending until that batch is due again. At least once:
 * a batch whose acknowledgement was lost is sent again, and the aggregate ids make the receiver count it once.
 */
@Injectable()
export class UsageExporter implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('UsageExport');
  private readonly config: UsageExportConfig;
  private readonly holder = `${process.pid}-${randomUUID()}`;
  private readonly leaseMs: number;
  private readonly client: OutboundClient;
  private readonly headers: Record<string, string>;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  /** The receiver was unreachable: nothing is sent before this (epoch ms, the gateway's clock). */
  private pausedUntil = 0;
  private lastPrune = 0;
  private readonly attempts: Counter<'outcome'>;
  private readonly skipped: Counter<'reason'>;
  private readonly aggregatesQueued: Counter.Internal;

  constructor(
    private readonly aggregates: UsageAggregatesRepository,
    private readonly outbox: UsageExportOutbox,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly gatewayConfig: GatewayConfig,
    metrics: AppMetrics,
  ) {
    this.config = gatewayConfig.usage.events;
    this.leaseMs = Math.max(MIN_LEASE_MS, 3 * this.config.intervalMs);
    this.client = new OutboundClient({ requireHttps: gatewayConfig.production, allowList: this.config.allowList });
    this.headers = this.config.token ? { authorization: `Bearer ${this.config.token}` } : {};
    this.attempts = new Counter({
      name: 'usage_events_attempts_total',
      help: 'Usage export requests sent to USAGE_EVENTS_URL, by outcome (acknowledged, refused: a 4xx, unreachable).',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
    this.skipped = new Counter({
      name: 'usage_events_skipped_total',
      help: 'Usage aggregates not exported, by reason (docs/usage-export.md): unmapped, no_value, not_metered, too_old, in_future, identifier_expired.',
      labelNames: ['reason'],
      registers: [metrics.registry],
    });
    this.aggregatesQueued = new Counter({
      name: 'usage_events_aggregates_queued_total',
      help: 'Usage aggregates put in the export outbox.',
      registers: [metrics.registry],
    }).labels();
  }

  get enabled(): boolean {
    return this.config.format !== 'off' && this.gatewayConfig.usage.enabled;
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    this.timer = setInterval(() => void this.tick(), this.config.intervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    if (this.enabled) await this.outbox.release(this.holder).catch(() => undefined);
  }

  /** One round (the timer's; tests call it): fill, then send. One at a time; false when another instance holds the lease. */
  tick(): Promise<void> {
    this.running ??= this.round()
      .catch((error: Error) => {
        if (!(error instanceof LeaseLost)) this.logger.warn(`Usage export: ${error.message}`);
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async round(): Promise<void> {
    if (this.stopped) return;
    const lease = await this.outbox.acquire(this.holder, this.leaseMs);
    if (lease === undefined) return;
    await this.fill(lease.after);
    await this.send();
    const now = this.clock.now();
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now;
      await this.outbox.prune(ACKNOWLEDGED_KEPT_DAYS, this.gatewayConfig.usage.minuteRetentionDays);
    }
  }

  /** Moves the settled minutes after the position into the outbox, a page at a time. */
  private async fill(after: Parameters<UsageAggregatesRepository['minutePage']>[0]): Promise<void> {
    for (let fills = 0; fills < FILLS_PER_TICK && !this.stopped; fills += 1) {
      const now = this.clock.now();
      const until = exportableUntil(now, this.config.settleMs, 'minute');
      const page = await this.aggregates.minutePage(after, until, ROWS_PER_FILL);
      if (page.last === undefined) return;
      const plan = usageExportRequests(page.aggregates, this.config, { now });
      const startOf = new Map(page.aggregates.map((aggregate) => [aggregateId(aggregate), aggregate.start]));
      const batches: NewBatch[] = plan.requests.map((request) => ({
        ...request,
        oldestStart: Math.min(...request.ids.map((id) => startOf.get(id) ?? now)),
      }));
      await this.outbox.fill(this.holder, after, page.last, batches, now);
      this.aggregatesQueued.inc(batches.reduce((sum, batch) => sum + batch.ids.length, 0));
      if (plan.skipped.length > 0) {
        const reasons = new Map<string, number>();
        for (const skip of plan.skipped) reasons.set(skip.reason, (reasons.get(skip.reason) ?? 0) + 1);
        for (const [reason, n] of reasons) this.skipped.inc({ reason }, n);
        this.logger.log(`Usage aggregates not exported: ${[...reasons].map(([r, n]) => `${n} ${r}`).join(', ')}`);
      }
      after = page.last;
      if (page.done) return;
    }
  }

  /** Sends the due batches in order, until none is due, the receiver is unreachable, or this round's share is sent. */
  private async send(): Promise<void> {
    for (let sent = 0; sent < SENDS_PER_TICK && !this.stopped; sent += 1) {
      const now = this.clock.now();
      if (now < this.pausedUntil) return;
      const batch = await this.outbox.nextDue(now);
      if (batch === undefined) return;
      if (this.config.format === 'stripe') {
        const decision = stripeSendDecision(
          batch.oldestStart,
          { firstAttemptAt: batch.firstAttemptAt, acknowledged: false },
          now,
        );
        if (!decision.send) {
          await this.outbox.hold(batch.id, decision.reason);
          this.skipped.inc({ reason: decision.reason }, batch.ids.length);
          this.logger.warn(`Usage export batch ${batch.id} held (${decision.reason}): ${batch.ids.join(', ')}`);
          continue;
        }
      }
      const retryAt =
        now + retryDelayMs(batch.attempts + 1, this.config.intervalMs, this.config.retryMaxMs, Math.random());
      await this.outbox.beginAttempt(this.holder, this.leaseMs, batch.id, now, retryAt);
      const outcome = await this.attempt(batch, retryAt);
      this.attempts.inc({ outcome });
      if (outcome === 'unreachable') {
        this.pausedUntil = retryAt;
        return;
      }
    }
  }

  /** One attempt of `batch`; its outcome recorded in the outbox. */
  private async attempt(batch: OutboxBatch, retryAt: number): Promise<AttemptOutcome> {
    const result = await this.client.send(this.config.ingestUrl!, {
      method: 'POST',
      headers: { 'content-type': batch.contentType, ...this.headers },
      body: batch.body,
      timeoutMs: ATTEMPT_TIMEOUT_MS,
    });
    if (result.kind === 'response' && result.status >= 200 && result.status < 300) {
      await this.outbox.acknowledge(batch.id, this.clock.now());
      return 'acknowledged';
    }
    const error =
      result.kind === 'response'
        ? `HTTP ${result.status}: ${result.body.toString('utf8', 0, 300)}`
        : `${result.kind}: ${result.message}`;
    await this.outbox.failed(batch.id, error, retryAt);
    this.logger.warn(`Usage export batch ${batch.id} not acknowledged (attempt ${batch.attempts + 1}): ${error}`);
    const receiverDown =
      result.kind !== 'response' || result.status >= 500 || result.status === 408 || result.status === 429;
    return receiverDown ? 'unreachable' : 'refused';
  }
}
