import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, Unique, UpdateDateColumn } from 'typeorm';
import type { CreditRefill, OperationCosts } from '@app/contract';
import type { AlertSettings } from '../plans/alert-thresholds';
import { PLAN_NAMES, PlanName } from '../plans/plans';

/** A caller of the public API: a unique name, a plan, optional limits of its own, and any number of keys. */
@Entity({ name: 'consumers' })
@Unique('UQ_consumers_name', ['name'])
export class ConsumerEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_consumers' })
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  name!: string;

  @Column({ type: 'enum', enum: PLAN_NAMES, enumName: 'consumer_plan' })
  plan!: PlanName;

  /** Both set or both null (a check constraint says so): the consumer's own limits, required on a custom plan. */
  @Column({ name: 'limit_per_minute', type: 'integer', nullable: true })
  limitPerMinute!: number | null;

  @Column({ name: 'limit_per_day', type: 'integer', nullable: true })
  limitPerDay!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  /** Set: every key of the consumer is refused until it is enabled again. */
  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt!: Date | null;

  /** Where its billing months are cut (docs/billing.md); null: its creation time. */
  @Column({ name: 'billing_anchor', type: 'timestamptz', nullable: true })
  billingAnchor!: Date | null;

  /**
   * The billing period in progress as the last anchor move re-cut it (docs/billing.md, "Moving the anchor"): the
   * start of the period the move found in progress, kept (the id of its monthly refill), and the new anchor's next
   * reset as its end. Both null, or a period that has ended: the periods are the anchor's.
   */
  @Column({ name: 'recut_period_start', type: 'timestamptz', nullable: true })
  recutPeriodStart!: Date | null;

  @Column({ name: 'recut_period_end', type: 'timestamptz', nullable: true })
  recutPeriodEnd!: Date | null;

  /** Its own monthly quota, agreed individually; null: its plan's, if the plan has one. */
  @Column({ name: 'limit_per_month', type: 'integer', nullable: true })
  limitPerMonth!: number | null;

  /** Prepaid credits (docs/billing.md): true in force (a top-up did it), false switched off, null: as its plan says. */
  @Column({ name: 'credits_enabled', type: 'boolean', nullable: true })
  creditsEnabled!: boolean | null;

  /** Its own credit refill, `{amount, every}`; null: its plan's, if any. */
  @Column({ name: 'credit_refill', type: 'jsonb', nullable: true })
  creditRefill!: CreditRefill | null;

  /** Its own cost per operation; null: its plan's (default 1 each). */
  @Column({ name: 'credit_costs', type: 'jsonb', nullable: true })
  creditCosts!: OperationCosts | null;

  /**
   * Its own alert thresholds (docs/alerts.md), `{thresholdsPercent?, creditsLowBalance?}`, either side in place of
   * its plan's; null: its plan's.
   */
  @Column({ name: 'alert_thresholds', type: 'jsonb', nullable: true })
  alertThresholds!: AlertSettings | null;

  /** The admin token that created it (null: root, an import, or before issue #24): `ownConsumersOnly` tokens see only theirs. */
  @Column({ name: 'created_by_token', type: 'uuid', nullable: true })
  createdByToken!: string | null;

  /** A contact address (null: none), lower-cased so that `GET /consumers?email=` finds it whatever its case. */
  @Index('IDX_consumers_email')
  @Column({ type: 'varchar', length: 254, nullable: true })
  email!: string | null;

  /** Where its keys and tokens (each also within its own ranges, if any) may be used from: CIDR ranges, normalized (allowed-addresses.ts); null: anywhere. */
  @Column({ name: 'allowed_addresses', type: 'text', array: true, nullable: true })
  allowedAddresses!: string[] | null;
}
