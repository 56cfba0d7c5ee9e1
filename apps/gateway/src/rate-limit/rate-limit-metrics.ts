import { AppMetrics } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';

/** Rate-limit refusals and bans by plan, and the health of the shared store, in the app's registry. */
@Injectable()
export class RateLimitMetrics {
  private readonly limited: Counter<'plan'>;
  private readonly banned: Counter<'plan'>;
  private readonly fallbacks: Counter;
  private readonly degraded: Gauge;

  constructor(metrics: AppMetrics) {
    const registers = [metrics.registry];
    this.limited = new Counter({ name: 'rate_limit_refusals_total', help: '429 RATE_LIMITED answers by plan.', labelNames: ['plan'], registers });
    this.banned = new Counter({ name: 'rate_limit_bans_total', help: '429 KEY_BANNED answers by plan.', labelNames: ['plan'], registers });
    this.fallbacks = new Counter({ name: 'rate_limit_store_fallbacks_total', help: 'Decisions taken on in-process counters because Redis did not answer.', registers });
    this.degraded = new Gauge({ name: 'rate_limit_store_degraded', help: '1 while Redis is unreachable and limits hold per instance.', registers });
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

  setDegraded(degraded: boolean): void {
    this.degraded.set(degraded ? 1 : 0);
  }
}
