import { AppMetrics } from '@app/platform';
import { Client } from 'pg';
import { FleetLeases } from '../../../apps/gateway/src/alerts/fleet-leases';
import { RECONCILIATION_LEASE, ThresholdReconciler } from '../../../apps/gateway/src/alerts/threshold-reconciler';
import { GatewayUnderTest } from '../../support/gateway';
import { withStack } from '../../support/with-stack';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A reconciliation every 2 s (the lease lasts two intervals): long beside a loaded machine's timer delays. */
const ENV = { ALERT_FLUSH_MS: '100', ALERT_RECONCILE_MS: '2000' };

/**
 * One instance of the fleet reconciles per interval (docs/alerts.md, "Reconciliation"): the one holding the
 * `threshold-reconciliation` lease (a row of `leases`, on the database's clock); the other tries and skips. When the
 * holder dies without giving the lease up, the lease expires and the other takes it over.
 */
describe('the reconciliation lease', () => {
  const stack = withStack({
    pets: {},
    database: true,
    gateways: { a: { env: ENV }, b: { env: ENV } },
    timeoutMs: 120_000,
  });
  afterEach(() => jest.restoreAllMocks());

  /** threshold_reconciliations_total of one instance, by outcome. */
  const runs = async (g: GatewayUnderTest): Promise<Record<string, number>> => {
    const metric = g.app.get(AppMetrics).registry.getSingleMetric('threshold_reconciliations_total');
    const out: Record<string, number> = { ran: 0, skipped: 0, failed: 0 };
    for (const { labels, value } of (await metric!.get()).values) out[labels.outcome as string] = value;
    return out;
  };
  const until = async (what: string, done: () => Promise<boolean>, ms = 30_000) => {
    for (let waited = 0; !(await done()); waited += 200) {
      if (waited > ms) throw new Error(`never: ${what}`);
      await sleep(200);
    }
  };

  it('only the holder reconciles, interval after interval; when it dies, the other takes the lease over', async () => {
    const [a, b] = [stack.a, stack.b];
    // Both instances have tried at least twice: one ran each time, the other skipped each time.
    await until('both tried twice', async () => {
      const [ra, rb] = [await runs(a), await runs(b)];
      return ra.ran + ra.skipped >= 2 && rb.ran + rb.skipped >= 2;
    });
    const [ra, rb] = [await runs(a), await runs(b)];
    const [holder, other] = ra.ran > 0 ? [a, b] : [b, a];
    expect(await runs(holder)).toMatchObject({ skipped: 0, failed: 0 });
    expect(await runs(other)).toMatchObject({ ran: 0, failed: 0 });
    expect(ra.ran + rb.ran).toBeGreaterThanOrEqual(2);
    const holderId = holder.app.get(FleetLeases).holder;
    expect((await other.app.get(FleetLeases).holderOf(RECONCILIATION_LEASE))?.holder).toBe(holderId);

    // The holder dies: it never gives the lease up (no graceful stop), so the other waits for it to expire.
    const reconciled = jest.spyOn(other.app.get(ThresholdReconciler), 'reconcile');
    jest.spyOn(holder.app.get(FleetLeases), 'release').mockResolvedValue();
    await holder.close();
    expect((await other.app.get(FleetLeases).holderOf(RECONCILIATION_LEASE))?.holder).toBe(holderId);
    await until('the other took over', async () => (await runs(other)).ran > 0);
    expect(reconciled).toHaveBeenCalled();
    expect((await other.app.get(FleetLeases).holderOf(RECONCILIATION_LEASE))?.holder).toBe(
      other.app.get(FleetLeases).holder,
    );
    // It keeps it: its next runs are its own too.
    const ran = (await runs(other)).ran;
    await until('the other ran again', async () => (await runs(other)).ran > ran);

    // A graceful stop gives the lease up at once.
    await other.close();
    const sql = new Client({ connectionString: stack.database.url });
    await sql.connect();
    try {
      expect((await sql.query(`SELECT name FROM "gateway"."leases"`)).rows).toEqual([]);
    } finally {
      await sql.end();
    }
  });
});
