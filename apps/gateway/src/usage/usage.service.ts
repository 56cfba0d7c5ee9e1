import { AppMetrics } from '@app/platform';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Response } from 'express';
import { Counter, Gauge } from 'prom-client';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { UsageRepository } from './usage.repository';
import { bucketsOf, minuteRowsOf, UsageBatch, UsageMinuteRow, UsageRecorder } from './usage-recorder';

/** The retention job runs this often, and once shortly after start (a fleet redeployed hourly still prunes). */
const RETENTION_EVERY_MS = 3_600_000;
const MINUTE_MS = 60_000;
/** The first run waits a random delay up to this: instances started together do not all try at once. */
const RETENTION_FIRST_WITHIN_MS = 60_000;

/**
 * What the recorder needs of a request (its ApiExchange): who it was, once authenticated (unset: the anonymous
 * row), the operation and the credits its admission spent.
 */
interface UsageSubject {
  consumer?: { name: string };
  keyId?: string;
  operation: string;
  creditsSpent: number;
}

/**
 * Usage history of this instance: every /v1 answer counted in memory (UsageRecorder) when its response
 * finishes, the batch written every USAGE_FLUSH_MS and on shutdown with an additive upsert (UsageRepository),
 * kept and merged into the next batch when the database is away, and the retention job.
 */
@Injectable()
export class UsageService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Usage');
  readonly recorder: UsageRecorder;
  private flushTimer?: NodeJS.Timeout;
  private retentionTimer?: NodeJS.Timeout;
  private firstRetentionTimer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private readonly failures: Counter.Internal;
  private readonly written: Counter.Internal;
  private readonly lateMinutes: Counter.Internal;

  constructor(
    private readonly repository: UsageRepository,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    metrics: AppMetrics,
  ) {
    const folded = new Counter({
      name: 'usage_answers_folded_total',
      help: 'Answers counted in the hour\'s "(overflow)" usage row because USAGE_MAX_BUCKETS buckets were held.',
      registers: [metrics.registry],
    });
    const minuteFolded = new Counter({
      name: 'usage_minute_answers_folded_total',
      help: 'Answers counted in their key\'s "(overflow)" operation of the hour because USAGE_MAX_MINUTE_CELLS minute cells were held.',
      registers: [metrics.registry],
    });
    this.recorder = new UsageRecorder({
      maxBuckets: config.usage.maxBuckets,
      maxMinuteCells: config.usage.maxMinuteCells,
      onFold: () => folded.inc(),
      onMinuteFold: () => minuteFolded.inc(),
    });
    this.lateMinutes = new Counter({
      name: 'usage_minute_rows_written_late_total',
      help: 'Per-minute usage rows written after USAGE_EVENTS_SETTLE_MS past their minute: the usage export may have sent that minute already (docs/usage-export.md).',
      registers: [metrics.registry],
    }).labels();
    this.failures = new Counter({
      name: 'usage_flush_failures_total',
      help: 'Usage batches that could not be written (kept for the next flush).',
      registers: [metrics.registry],
    }).labels();
    this.written = new Counter({
      name: 'usage_rows_written_total',
      help: 'Hourly usage rows upserted by this instance.',
      registers: [metrics.registry],
    }).labels();
    const recorder = this.recorder;
    new Gauge({
      name: 'usage_buckets_held',
      help: `Usage buckets held in memory until the next flush (bound: USAGE_MAX_BUCKETS, ${config.usage.maxBuckets}).`,
      registers: [metrics.registry],
      collect() {
        this.set(recorder.size);
      },
    });
  }

  /**
   * Counts the answer to `request` when its response finishes (its final status, whoever wrote it: the proxy,
   * a refusal, the exception filter). Called once per /v1 request, by the pipeline; who it was is read when it
   * finishes, so that authentication may name the consumer meanwhile.
   */
  track(request: UsageSubject, response: Pick<Response, 'once' | 'statusCode'>): void {
    if (!this.config.usage.enabled) return;
    const started = this.clock.monotonic();
    response.once('finish', () => {
      this.recorder.record(
        request.consumer?.name,
        request.keyId,
        response.statusCode,
        this.clock.monotonic() - started,
        this.clock.now(),
        request.operation,
        request.creditsSpent,
      );
    });
  }

  /** Writes what is held; a failed write is counted back in (merged with what arrived meanwhile). One at a time. */
  flush(): Promise<void> {
    this.flushing ??= this.writeHeld().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async writeHeld(): Promise<void> {
    const batch: UsageBatch = this.recorder.drain();
    const buckets = bucketsOf(batch);
    if (buckets.length === 0) return;
    const minutes = minuteRowsOf(buckets);
    try {
      await this.repository.write(buckets, minutes);
      this.written.inc(buckets.length);
      this.countLate(minutes);
    } catch (error) {
      this.recorder.restore(batch);
      this.failures.inc();
      this.logger.warn(
        `Usage batch of ${buckets.length} rows not written, kept for the next flush: ${(error as Error).message}`,
      );
    }
  }

  /**
   * Minute rows written once their minute was settled for the usage export (its end + USAGE_EVENTS_SETTLE_MS
   * passed): what the export may not carry (docs/usage-export.md, "Late writes"). Counted only with the export on.
   */
  private countLate(minutes: readonly UsageMinuteRow[]): void {
    const events = this.config.usage.events;
    if (events.format === 'off' || minutes.length === 0) return;
    const settledBefore = this.clock.now() - events.settleMs - MINUTE_MS;
    let late = 0;
    for (const row of minutes) if (row.minute < settledBefore) late += 1;
    if (late > 0) {
      this.lateMinutes.inc(late);
      this.logger.warn(`${late} per-minute usage rows written after their minute settled for the usage export`);
    }
  }

  /** Deletes rows past USAGE_RETENTION_DAYS (minute rows: USAGE_MINUTE_RETENTION_DAYS), one instance at a time; the rows deleted. */
  async prune(): Promise<number | null> {
    return this.repository.prune(this.config.usage.retentionDays, this.config.usage.minuteRetentionDays);
  }

  onApplicationBootstrap(): void {
    this.flushTimer = setInterval(() => void this.flush(), this.config.usage.flushMs);
    this.flushTimer.unref();
    const prune = () => this.prune().catch((error: Error) => this.logger.warn(`Usage retention: ${error.message}`));
    this.firstRetentionTimer = setTimeout(prune, Math.random() * RETENTION_FIRST_WITHIN_MS);
    this.firstRetentionTimer.unref();
    this.retentionTimer = setInterval(prune, RETENTION_EVERY_MS);
    this.retentionTimer.unref();
  }

  /** The last batch, after the server stopped taking requests and before the database closes. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.flushTimer);
    clearTimeout(this.firstRetentionTimer);
    clearInterval(this.retentionTimer);
    await this.flushing;
    await this.flush();
  }
}
