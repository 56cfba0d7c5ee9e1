import { EXPECTED_VOLUME_MAX, MESSAGE_MAX } from '@app/contract';
import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

export const PLAN_REQUEST_STATUSES = ['pending', 'approved', 'declined'] as const;
export type PlanRequestStatus = (typeof PLAN_REQUEST_STATUSES)[number];

/**
 * A consumer's request for another plan, made on the developer portal (issue #25) and decided by an operator
 * (issue #26). At most one is pending per consumer: the partial unique index says so, whatever the race.
 */
@Entity({ name: 'plan_requests' })
@Index('UQ_plan_requests_one_pending', ['consumer'], { unique: true, where: `"status" = 'pending'` })
@Index('IDX_plan_requests_created_at', ['createdAt', 'id'])
export class PlanRequestEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_plan_requests' })
  id!: string;

  /** The consumer's name (names never change). */
  @Column({ type: 'varchar', length: 64 })
  consumer!: string;

  @Column({ name: 'current_plan', type: 'varchar', length: 32 })
  currentPlan!: string;

  @Column({ name: 'requested_plan', type: 'varchar', length: 32 })
  requestedPlan!: string;

  @Column({ name: 'expected_volume', type: 'varchar', length: EXPECTED_VOLUME_MAX })
  expectedVolume!: string;

  @Column({ type: 'varchar', length: MESSAGE_MAX })
  message!: string;

  @Column({ type: 'enum', enum: PLAN_REQUEST_STATUSES, enumName: 'plan_request_status', default: 'pending' })
  status!: PlanRequestStatus;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'decided_at', type: 'timestamptz', nullable: true })
  decidedAt!: Date | null;

  /** The name of the admin token that decided (`root` for ADMIN_TOKEN). */
  @Column({ name: 'decided_by', type: 'varchar', length: 64, nullable: true })
  decidedBy!: string | null;

  /** The reviewer's note (a decline's reason), shown to the requester. */
  @Column({ type: 'varchar', length: MESSAGE_MAX, nullable: true })
  note!: string | null;

  /**
   * Who asked: the person the web app named (`account:<id> <email>`, the portal's developer), else the name of the
   * admin token that asked. Null for requests made before it was kept.
   */
  @Column({ name: 'requested_by', type: 'varchar', length: 320, nullable: true })
  requestedBy!: string | null;
}
