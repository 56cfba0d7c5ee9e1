import { AppMetrics } from '@app/platform';
import { ApiError } from '@app/errors';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { Clock } from '../clock';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import { UsageRange } from './usage-range';
import { ExportRow, UsageRepository } from './usage.repository';

/** Why an export ended before its last line: its client went away, read nothing for too long, or it ran too long. */
export type ExportEndReason = 'client_gone' | 'stalled' | 'timed_out';

/** Thrown by an export's writer (or by UsageExports) to end it early; the answer is then cut off, never completed. */
export class ExportEnded extends Error {
  constructor(
    readonly reason: ExportEndReason,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Takes a page of the export to the client: resolves once the client has taken it in, or throws (an ExportEnded
 * for a client gone or too slow) when it has not within `withinMs`.
 */
export type ExportWriter = (rows: ExportRow[], withinMs: number) => Promise<void>;

/** The 503 of an export over USAGE_EXPORT_CONCURRENCY (documented in the admin OpenAPI document as it is). */
export const EXPORTS_BUSY_MESSAGE =
  'This instance already runs as many usage exports as it allows at once (USAGE_EXPORT_CONCURRENCY): retry shortly.';
/** An export ends within seconds unless its client stalls (then within USAGE_EXPORT_WRITE_TIMEOUT_MS). */
const EXPORTS_BUSY_RETRY_AFTER_S = 5;

type Outcome = 'completed' | 'refused' | 'failed' | ExportEndReason;

/**
 * The CSV export's bounds (issue #36): a read-only token must not be able to hold what the data plane needs.
 * At most USAGE_EXPORT_CONCURRENCY exports run at once on an instance (more get 503 `SERVICE_UNAVAILABLE` with
 * Retry-After), each on a database connection of its own (UsageRepository.exportRows: never one of the pool the
 * key lookups use); a client that leaves a page unread for USAGE_EXPORT_WRITE_TIMEOUT_MS is cut off, and so is
 * an export still running after USAGE_EXPORT_TIMEOUT_MS (its query included), so every export gives its slot
 * and its connection back within a known time, whatever its client does.
 */
@Injectable()
export class UsageExports {
  private readonly logger = new Logger('Usage');
  private running = 0;
  private readonly outcomes: Counter<'outcome'>;

  constructor(
    private readonly repository: UsageRepository,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    metrics: AppMetrics,
  ) {
    this.outcomes = new Counter({
      name: 'usage_exports_total',
      help: 'CSV usage exports by outcome: completed, refused (USAGE_EXPORT_CONCURRENCY), client_gone, stalled (USAGE_EXPORT_WRITE_TIMEOUT_MS), timed_out (USAGE_EXPORT_TIMEOUT_MS), failed.',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
    const running = () => this.running;
    new Gauge({
      name: 'usage_exports_running',
      help: `CSV usage exports running on this instance (at most USAGE_EXPORT_CONCURRENCY, ${config.usage.export.concurrency}).`,
      registers: [metrics.registry],
      collect() {
        this.set(running());
      },
    });
  }

  /**
   * Runs an export of `range` into `write`, once a slot is free (else 503 at once: nothing was written). The
   * writer is given how long it may wait on its client for each page: the write timeout, or less as the whole
   * export's deadline nears.
   */
  async run(range: UsageRange, write: ExportWriter): Promise<void> {
    const { concurrency, writeTimeoutMs, timeoutMs } = this.config.usage.export;
    if (this.running >= concurrency) {
      this.outcomes.inc({ outcome: 'refused' });
      throw new ApiError('SERVICE_UNAVAILABLE', EXPORTS_BUSY_MESSAGE, {
        'Retry-After': String(EXPORTS_BUSY_RETRY_AFTER_S),
      });
    }
    this.running += 1;
    const until = this.clock.monotonic() + timeoutMs;
    let outcome: Outcome = 'failed';
    try {
      await this.repository.exportRows(range.granularity, range.from, range.to, timeoutMs, async (rows) => {
        const left = until - this.clock.monotonic();
        if (left <= 0)
          throw new ExportEnded('timed_out', `The export ran past USAGE_EXPORT_TIMEOUT_MS (${timeoutMs} ms)`);
        await write(rows, Math.min(writeTimeoutMs, left));
      });
      outcome = 'completed';
    } catch (error) {
      if (error instanceof ExportEnded) {
        // A client too slow for what is left of the export's time: the export's deadline cut it, not the write's.
        outcome = error.reason === 'stalled' && this.clock.monotonic() >= until ? 'timed_out' : error.reason;
        if (outcome !== 'client_gone')
          this.logger.warn(
            `A usage export was cut off: ${outcome === 'stalled' ? `its client read nothing for ${writeTimeoutMs} ms (USAGE_EXPORT_WRITE_TIMEOUT_MS)` : `it ran past USAGE_EXPORT_TIMEOUT_MS (${timeoutMs} ms)`}`,
          );
        if (outcome !== error.reason) throw new ExportEnded(outcome, error.message);
      }
      throw error;
    } finally {
      this.running -= 1;
      this.outcomes.inc({ outcome });
    }
  }
}
