import type { AuditChanges } from '../access/audit-entry.entity';
import { BillingPeriod, moveAnchor, RecutPeriod } from '../periods/billing-period';
import type { AlertThresholds } from '../plans/alert-thresholds';
import type { CreditTerms } from '../plans/plan-limits';
import { Limits, PlanName } from '../plans/plans';
import type { ConsumerEntity } from './consumer.entity';

/** An authenticated caller, as the rest of the gateway sees it: never the key. */
export interface Consumer {
  name: string;
  plan: PlanName;
  limits: Limits;
  /** Unix ms where its billing months are cut (its anchor, else its creation time): docs/billing.md. */
  billingAnchorMs: number;
  /**
   * The period in progress as the last anchor move re-cut it (in force while now is inside it: the monthly quota's
   * and a monthly refill's period; docs/billing.md); null or absent: none.
   */
  recutPeriod?: RecutPeriod | null;
  /** Its prepaid credits' terms when they are in force (docs/billing.md), else undefined. */
  credits?: CreditTerms;
  /**
   * Its own alert thresholds (docs/alerts.md), worked out once when it was loaded; absent: its plan's. Read by
   * ThresholdPolicy on the request path as they are.
   */
  alerts?: AlertThresholds;
}

/** The consumer's own limits, or `null` when it has the plan's. */
export function limitsOf(consumer: ConsumerEntity): Limits | null {
  return consumer.limitPerMinute !== null && consumer.limitPerDay !== null
    ? { perMinute: consumer.limitPerMinute, perDay: consumer.limitPerDay }
    : null;
}

/** The re-cut period an anchor move recorded on a stored consumer (ended or not), or null. */
export function recutPeriodOf(
  consumer: Pick<ConsumerEntity, 'recutPeriodStart' | 'recutPeriodEnd'>,
): RecutPeriod | null {
  return consumer.recutPeriodStart !== null && consumer.recutPeriodEnd !== null
    ? { startMs: consumer.recutPeriodStart.getTime(), endMs: consumer.recutPeriodEnd.getTime() }
    : null;
}

/** A billing period as the audit log writes it. */
const periodJson = (period: BillingPeriod) => ({
  start: new Date(period.startMs).toISOString(),
  end: new Date(period.endMs).toISOString(),
});

/**
 * Moving a stored consumer's anchor to `anchor` (null: back to its creation time) at `movedAtMs`: the re-cut period
 * to store (billing-period.ts `moveAnchor`: the period in progress keeps its start, so no refill and no fresh month),
 * and its effect for the audit row, `billingPeriod: {before, after}` (absent when the period in progress is unchanged).
 */
export function anchorMoveOf(
  consumer: Pick<ConsumerEntity, 'billingAnchor' | 'createdAt' | 'recutPeriodStart' | 'recutPeriodEnd'>,
  anchor: Date | null,
  movedAtMs: number,
): {
  columns: Pick<ConsumerEntity, 'recutPeriodStart' | 'recutPeriodEnd'>;
  changes: AuditChanges;
} {
  const move = moveAnchor(
    (consumer.billingAnchor ?? consumer.createdAt).getTime(),
    recutPeriodOf(consumer),
    (anchor ?? consumer.createdAt).getTime(),
    movedAtMs,
  );
  const [before, after] = [periodJson(move.before), periodJson(move.after)];
  return {
    columns: {
      recutPeriodStart: move.recut && new Date(move.recut.startMs),
      recutPeriodEnd: move.recut && new Date(move.recut.endMs),
    },
    changes: before.start === after.start && before.end === after.end ? {} : { billingPeriod: { before, after } },
  };
}
