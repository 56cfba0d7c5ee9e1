import { EntitySchema } from 'typeorm';

/** A lease as the table holds it. */
export interface LeaseRow {
  /** What the lease is for ('threshold-reconciliation'). */
  name: string;
  /** The instance holding it (a random id per process). */
  holder: string;
  /** Past it, any instance may take the lease over (its holder died, or stopped renewing). */
  expires_at: Date;
}

/**
 * leases: one row per fleet-wide job, naming the instance that runs it until `expires_at` (docs/alerts.md,
 * "Reconciliation"). A row, not a session advisory lock: the embedded engine serves one session to the whole pool,
 * so a session lock would be every connection's at once.
 */
export const LeaseEntity = new EntitySchema<LeaseRow>({
  name: 'Lease',
  tableName: 'leases',
  columns: {
    name: { type: 'varchar', length: 64, primary: true, primaryKeyConstraintName: 'PK_leases' },
    holder: { type: 'varchar', length: 64 },
    expires_at: { type: 'timestamptz' },
  },
});
