import { AppMetrics } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';

/** Rate-limit refusals and bans by plan, and the health of the shared store, in the app's registry. */
@Injectable()
export class RateLimitMetrics {
  private readonly limited: Counter<'plan'>;
  private readonly banned: Counter<'plan'>;
  private readonly fallbacks: Counter;
  private readonly undecided: Counter<'reason'>;
  private readonly degraded: Gauge;
  private trackerCount: () => number = () => 0;

  constructor(metrics: AppMetrics) {
    const registers = [metrics.registry];
    this.limited = new Counter({
      name: 'rate_limit_refusals_total',
      help: '429 RATE_LIMITED answers by plan.',
      labelNames: ['plan'],
      registers,
    });
    this.banned = new Counter({
      name: 'rate_limit_bans_total',
      help: 'Bans started, by plan (one per ban, however many requests it refuses).',
      labelNames: ['plan'],
      registers,
    });
    this.fallbacks = new Counter({
      name: 'rate_limit_store_fallbacks_total',
      help: 'Decisions taken on in-process counters because Redis was gone (failure mode open).',
      registers,
    });
    this.undecided = new Counter({
      name: 'rate_limit_undecided_total',
      help: '503 answers because no rate-limit decision could be taken: reason late (Redis replied too late) or outage (Redis gone, failure mode closed).',
      labelNames: ['reason'],
      registers,
    });
    const trackers = () => this.trackerCount();
    new Gauge({
      name: 'rate_limit_memory_trackers',
      help: 'Trackers held by the in-process counters (the store, or the fallback and its memory of Redis).',
      registers,
      collect() {
        this.set(trackers());
      },
    });
    this.degraded = new Gauge({
      name: 'rate_limit_store_degraded',
      help: '1 while Redis is unreachable (limits hold per instance, or 503s in failure mode closed).',
      registers,
    });
  }

  countLimited(plan: string): void {
    this.limited.inc({ plan });
  }

  countBanned(plan: string): void {
    this.banned.inc({ plan });
  }

  countFallback(): void {
    this.fallbacks.inc();
  }

  countUnavailable(reason: 'late' | 'outage'): void {
    this.undecided.inc({ reason });
  }

  /** Reports, at each scrape, how many trackers the in-process counters hold (bounded by RATE_LIMIT_MEMORY_MAX_TRACKERS). */
  watchTrackers(size: () => number): void {
    this.trackerCount = size;
  }

  setDegraded(degraded: boolean): void {
    this.degraded.set(degraded ? 1 : 0);
  }
}
