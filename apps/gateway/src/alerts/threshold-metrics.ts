import { AppMetrics } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';

/** Threshold events written, by type and by who wrote them, in the app's registry. */
@Injectable()
export class ThresholdMetrics {
  private readonly generated: Counter<'type' | 'source'>;
  private readonly failures: Counter;
  private readonly reconciliations: Counter<'outcome'>;
  private readonly dropped: Counter;

  constructor(metrics: AppMetrics) {
    const registers = [metrics.registry];
    this.generated = new Counter({
      name: 'threshold_events_total',
      help: 'Threshold events this instance wrote (each one once for the fleet), by type and source (request: the instance that decided the crossing; reconciler: found missing by a reconciliation).',
      labelNames: ['type', 'source'],
      registers,
    });
    this.failures = new Counter({
      name: 'threshold_event_write_failures_total',
      help: 'Writes of threshold events that failed (database away): the candidates are kept for the next flush, and the reconciliation finds what was lost.',
      registers,
    });
    this.dropped = new Counter({
      name: 'threshold_candidates_known_total',
      help: "Threshold candidates (a flush's, a reconciliation's) dropped before their write, their event known written (this instance's memory of recent events, or one query for the batch).",
      registers,
    });
    this.reconciliations = new Counter({
      name: 'threshold_reconciliations_total',
      help: "Periodic reconciliations of threshold events, by outcome (ran: this instance held the fleet's lease and reconciled; skipped: another instance holds it; failed).",
      labelNames: ['outcome'],
      registers,
    });
  }

  droppedKnown(count: number): void {
    if (count > 0) this.dropped.inc(count);
  }

  reconciliation(outcome: 'ran' | 'skipped' | 'failed'): void {
    this.reconciliations.inc({ outcome });
  }

  generatedOne(type: string, source: string): void {
    this.generated.inc({ type, source });
  }

  writeFailed(): void {
    this.failures.inc();
  }
}
