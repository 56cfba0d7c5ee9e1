import { Injectable } from '@nestjs/common';
import { Clock } from '../clock';
import { AdminActor, AdminRequestContext } from '../access/admin-context';
import { limitsOf, recutPeriodOf } from '../consumers/consumer';
import { ConsumerEntity } from '../consumers/consumer.entity';
import { ConsumersService } from '../consumers/consumers.service';
import type { CreditRefill, OperationCosts } from '@app/contract';
import type { AlertSettings } from '../plans/alert-thresholds';
import { CreditTerms, PlanLimits } from '../plans/plan-limits';
import { BillingPeriod, currentBillingPeriod } from '../periods/billing-period';

/** A consumer's billing as the admin API shows it. */
export interface BillingState {
  consumer: string;
  /** Where its months are cut: its own anchor, else its creation time. */
  billingAnchor: Date;
  /** Whether `billingAnchor` is its own (false: its creation time, the default). */
  anchorSet: boolean;
  /** When the consumer was created (none of its usage is older). */
  createdAt: Date;
  /** Its own monthly quota, or null (its plan's, if any). */
  ownPerMonth: number | null;
  /** The monthly quota it is held to: its own, else its plan's; null: none. */
  perMonth: number | null;
  /** The billing period in progress: the one the last anchor move re-cut while that lasts, else the anchor's. */
  currentPeriod: BillingPeriod;
  /** Its credit terms when credits are in force for it, else undefined (the balance is the counter store's). */
  credits?: CreditTerms;
  /** Every public operation's cost (its own over its plan's, else 1). */
  costs: CreditTerms['costs'];
  /** Its own alert thresholds (a side absent: its plan's), or null: its plan's. */
  alerts: AlertSettings | null;
}

/** What the credit rules read of a stored consumer. */
export const creditSettingsOf = (consumer: ConsumerEntity) => ({
  plan: consumer.plan,
  creditsEnabled: consumer.creditsEnabled,
  creditRefill: consumer.creditRefill,
  costs: consumer.creditCosts,
});

/**
 * A consumer's billing anchor and monthly quota: read, and changed (audited, through ConsumersService, which
 * publishes the change to every instance). The counts themselves are the rate-limit store's (the usage).
 */
@Injectable()
export class BillingService {
  constructor(
    private readonly consumers: ConsumersService,
    private readonly planLimits: PlanLimits,
    private readonly clock: Clock,
  ) {}

  async get(actor: AdminActor, name: string): Promise<BillingState> {
    return this.stateOf((await this.consumers.get(actor, name)).consumer);
  }

  async update(
    context: AdminRequestContext,
    name: string,
    patch: {
      billingAnchor?: Date | null;
      perMonth?: number | null;
      creditRefill?: CreditRefill | null;
      costs?: OperationCosts | null;
      alerts?: AlertSettings | null;
    },
  ): Promise<BillingState> {
    return this.stateOf(await this.consumers.setBilling(context, name, patch, this.clock.now()));
  }

  private stateOf(consumer: ConsumerEntity): BillingState {
    const billingAnchor = consumer.billingAnchor ?? consumer.createdAt;
    const limits = this.planLimits.effective({
      plan: consumer.plan,
      limits: limitsOf(consumer),
      perMonth: consumer.limitPerMonth,
    });
    return {
      consumer: consumer.name,
      billingAnchor,
      anchorSet: consumer.billingAnchor !== null,
      createdAt: consumer.createdAt,
      ownPerMonth: consumer.limitPerMonth,
      perMonth: limits?.perMonth ?? null,
      currentPeriod: currentBillingPeriod(billingAnchor.getTime(), recutPeriodOf(consumer), this.clock.now()),
      credits: this.planLimits.credits(creditSettingsOf(consumer)),
      costs: this.planLimits.costs({ plan: consumer.plan, costs: consumer.creditCosts }),
      alerts: consumer.alertThresholds,
    };
  }
}
