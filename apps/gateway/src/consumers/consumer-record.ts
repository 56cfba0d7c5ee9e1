import type { CreditRefill, OperationCosts } from '@app/contract';
import { AlertSettings, AlertThresholds, alertThresholdsOf } from '../plans/alert-thresholds';
import type { PlanLimits } from '../plans/plan-limits';
import type { Limits, PlanName } from '../plans/plans';
import type { RecutPeriod } from '../periods/billing-period';
import type { Consumer } from './consumer';

/**
 * The consumers table's columns the data plane reads, for a plain-SQL select (`alias`: the table's alias in the
 * query): the key lookup's and the threshold reconciliation's, mapped by `consumerRecordOf` alike.
 */
export const consumerColumns = (a: string): string =>
  `${a}.name, ${a}.plan, ${a}.limit_per_minute, ${a}.limit_per_day, ${a}.limit_per_month, ` +
  `COALESCE(${a}.billing_anchor, ${a}.created_at) AS billing_anchor, ${a}.recut_period_start, ${a}.recut_period_end, ` +
  `${a}.credits_enabled, ${a}.credit_refill, ${a}.credit_costs, ${a}.alert_thresholds`;

/** A row of `consumerColumns`. */
export interface ConsumerRow {
  name: string;
  plan: PlanName;
  limit_per_minute: number | null;
  limit_per_day: number | null;
  limit_per_month: number | null;
  billing_anchor: Date;
  recut_period_start: Date | null;
  recut_period_end: Date | null;
  credits_enabled: boolean | null;
  credit_refill: CreditRefill | null;
  credit_costs: OperationCosts | null;
  alert_thresholds: AlertSettings | null;
}

/** A consumer as stored, what the data plane keeps of it (the key cache holds these): its own settings, not yet the plan's. */
export interface ConsumerRecord {
  name: string;
  plan: PlanName;
  limits: Limits | null;
  /** Its own monthly quota (null: the plan's, if any). */
  perMonth: number | null;
  /** Where its billing months are cut: its anchor, else its creation time. */
  billingAnchor: Date;
  /** The period in progress as the last anchor move re-cut it (ended or not), or null. */
  recutPeriod: RecutPeriod | null;
  creditsEnabled: boolean | null;
  creditRefill: CreditRefill | null;
  costs: OperationCosts | null;
  /** Its own alert thresholds, worked out once here (undefined: its plan's): the request path reads them as they are. */
  alerts?: AlertThresholds;
}

/** A row as a record: once per row read, never per request. */
export function consumerRecordOf(row: ConsumerRow): ConsumerRecord {
  return {
    name: row.name,
    plan: row.plan,
    limits:
      row.limit_per_minute !== null && row.limit_per_day !== null
        ? { perMinute: row.limit_per_minute, perDay: row.limit_per_day }
        : null,
    perMonth: row.limit_per_month,
    billingAnchor: new Date(row.billing_anchor),
    recutPeriod:
      row.recut_period_start !== null && row.recut_period_end !== null
        ? { startMs: new Date(row.recut_period_start).getTime(), endMs: new Date(row.recut_period_end).getTime() }
        : null,
    creditsEnabled: row.credits_enabled,
    creditRefill: row.credit_refill,
    costs: row.credit_costs,
    alerts: alertThresholdsOf(row.alert_thresholds),
  };
}

/** The consumer a record stands for, its plan's rules applied; undefined when it has no limits (a custom plan's without its own). */
export function consumerOf(record: ConsumerRecord, planLimits: PlanLimits): Consumer | undefined {
  const limits = planLimits.effective(record);
  if (!limits) return undefined;
  return {
    name: record.name,
    plan: record.plan,
    limits,
    billingAnchorMs: record.billingAnchor.getTime(),
    recutPeriod: record.recutPeriod,
    credits: planLimits.credits(record),
    alerts: record.alerts,
  };
}
