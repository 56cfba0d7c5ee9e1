import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, GatewayConfig } from '../config/gateway.config';
import type { Consumer } from '../consumers/consumer';

/** The windows thresholds apply to: the long ones (a minute's window resets before anyone could act on it). */
export const ALERTED_WINDOWS: ReadonlySet<string> = new Set(['day', 'month']);

/**
 * Which thresholds apply to a consumer (docs/alerts.md): the shares of its day and month windows
 * (ALERT_THRESHOLDS_PERCENT, 80 % and 100 % by default) and the credit balance levels (ALERT_CREDITS_LOW_BALANCE,
 * and 0: the balance spent). Read once from the configuration; the same arrays for every request (nothing allocated
 * on the request path). Per-plan and per-consumer thresholds are not built yet: the consumer is taken so that they
 * can be, without touching the callers.
 */
@Injectable()
export class ThresholdPolicy {
  readonly enabled: boolean;
  private readonly shares: readonly number[];
  private readonly levels: readonly number[];

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.enabled = config.alerts.enabled;
    this.shares = config.alerts.windowThresholds;
    const low = config.alerts.creditsLowBalance;
    this.levels = low > 0 ? [low, 0] : [0];
  }

  /** The shares (0.8, 1) of a day or month window that raise an event, ascending. */
  windowShares(_consumer: Pick<Consumer, 'name' | 'plan'>): readonly number[] {
    return this.shares;
  }

  /** The credit balance levels (the low balance, 0) whose crossing raises an event, descending. */
  creditLevels(_consumer: Pick<Consumer, 'name' | 'plan'>): readonly number[] {
    return this.levels;
  }
}
