import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GATEWAY_DATA_SOURCE, schemaOf } from '../database/data-source.options';

/**
 * Leases on a fleet-wide job (the `leases` table): the instance that holds one does the job until the lease expires;
 * it renews it each time it does it, so it keeps it while it lives; another instance takes it over once it has
 * expired (its holder died, or stopped). One statement, on the database's clock (the instances' clocks may differ):
 * an insert, or an update of a lease that is this instance's own or has expired. A row, not a session advisory lock:
 * the embedded engine serves one session to the whole pool, so such a lock would be every connection's at once.
 */
@Injectable()
export class FleetLeases {
  /** This instance, as the holder of its leases: a process of its own each start. */
  readonly holder = randomUUID();

  constructor(@InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource) {}

  /** Takes the lease `name` for `ttlMs`, or renews it: whether this instance holds it now. */
  async acquire(name: string, ttlMs: number): Promise<boolean> {
    const leases = `"${schemaOf(this.dataSource)}"."leases"`;
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO ${leases} AS lease (name, holder, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond') ` +
        `ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at ` +
        `WHERE lease.holder = EXCLUDED.holder OR lease.expires_at < now() RETURNING holder`,
      [name, this.holder, ttlMs],
    );
    return rows.length > 0;
  }

  /** Gives the lease up if this instance holds it (a graceful stop: another instance need not wait for it to expire). */
  async release(name: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM "${schemaOf(this.dataSource)}"."leases" WHERE name = $1 AND holder = $2`, [
      name,
      this.holder,
    ]);
  }

  /** Who holds the lease `name` and until when (none: nobody ever took it, or its holder gave it up). */
  async holderOf(name: string): Promise<{ holder: string; expiresAt: Date } | undefined> {
    const [row]: Array<{ holder: string; expires_at: Date }> = await this.dataSource.query(
      `SELECT holder, expires_at FROM "${schemaOf(this.dataSource)}"."leases" WHERE name = $1`,
      [name],
    );
    return row && { holder: row.holder, expiresAt: new Date(row.expires_at) };
  }
}
