import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import type { Consumer } from '../consumers/consumer';
import { AlertThresholds, levelsOf, sharesOf } from '../plans/alert-thresholds';
import { PLAN_NAMES, PLAN_TABLE, PlanName, PlanTable } from '../plans/plans';

/** The windows thresholds apply to: the long ones (a minute's window resets before anyone could act on it). */
export const ALERTED_WINDOWS: ReadonlySet<string> = new Set(['day', 'month']);

/** Both sides, as a plan's (or the gateway's) are always complete. */
type Thresholds = Required<AlertThresholds>;

const thresholdsOf = (percents: readonly number[], low: number): Thresholds => ({
  shares: sharesOf(percents),
  levels: levelsOf(low),
});

/**
 * Which thresholds apply to a consumer (docs/alerts.md): the shares of its day and month windows and the credit
 * balance levels (the low balance, and 0: the balance spent): the consumer's own (set through the billing route,
 * worked out once when the consumer is loaded: `Consumer.alerts`), else its plan's (`alerts` in gateway/plans.json)
 * where the plan declares them, else the gateway's (ALERT_THRESHOLDS_PERCENT, 80 % and 100 % by default;
 * ALERT_CREDITS_LOW_BALANCE), each side on its own. Worked out once per plan at start: the same arrays for every
 * request (nothing allocated on the request path).
 */
@Injectable()
export class ThresholdPolicy {
  readonly enabled: boolean;
  private readonly byPlan = new Map<PlanName, Thresholds>();
  private readonly defaults: Thresholds;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig, @Inject(PLAN_TABLE) plans: PlanTable) {
    this.enabled = config.alerts.enabled;
    const percents = config.alerts.windowThresholds.map((share) => Math.round(share * 100));
    const low = config.alerts.creditsLowBalance;
    this.defaults = thresholdsOf(percents, low);
    for (const name of PLAN_NAMES) {
      const entry = plans[name];
      const alerts = entry === 'custom' || entry === undefined ? undefined : entry.alerts;
      this.byPlan.set(
        name,
        alerts ? thresholdsOf(alerts.thresholdsPercent ?? percents, alerts.creditsLowBalance ?? low) : this.defaults,
      );
    }
  }

  /** The shares (0.8, 1) of a day or month window that raise an event, ascending. */
  windowShares(consumer: Pick<Consumer, 'plan' | 'alerts'>): readonly number[] {
    return consumer.alerts?.shares ?? (this.byPlan.get(consumer.plan) ?? this.defaults).shares;
  }

  /** The credit balance levels (the low balance, 0) whose crossing raises an event, descending. */
  creditLevels(consumer: Pick<Consumer, 'plan' | 'alerts'>): readonly number[] {
    return consumer.alerts?.levels ?? (this.byPlan.get(consumer.plan) ?? this.defaults).levels;
  }
}
