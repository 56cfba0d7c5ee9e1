import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AddThresholdEventSeq1797400000000 } from '../../../apps/gateway/src/database/migrations/1797400000000-AddThresholdEventSeq';
import { idSorting, migratedGatewayDatabase } from '../../support/migrated-gateway-database';

/**
 * The migration that gives threshold events their seq (docs/alerts.md) numbers the events already written in the
 * order they were listed in until then, (created_at, id), so that no page of the listing changes its order; the next
 * event written comes after them all.
 */
describe('AddThresholdEventSeq on existing rows', () => {
  let migrated: Awaited<ReturnType<typeof migratedGatewayDatabase>> | undefined;
  let source: DataSource;

  beforeAll(async () => {
    migrated = await migratedGatewayDatabase();
    source = migrated.source;
  });
  afterAll(() => migrated?.close());

  it('gives existing events a seq in (created_at, id) order, and goes on from there', async () => {
    const migration = new AddThresholdEventSeq1797400000000();
    const runner = source.createQueryRunner();
    const insert = (id: string, at: Date, threshold: number) =>
      runner.query(
        `INSERT INTO "gateway"."threshold_events" (id, type, consumer, policy, period_start, period_end, threshold, arming, quota, used, balance, crossed_at, source, created_at) ` +
          `VALUES ($1, 'quota.threshold_crossed', 'c', 'day', $2, $2, $3, '', 1000, 800, NULL, $2, 'request', $2)`,
        [id, at, threshold],
      );
    try {
      // The table as it was before: events without seq.
      await migration.down(runner);
      const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
      // Inserted out of order: the oldest last, and two of one millisecond whose ids sort the other way round.
      const rows = [
        { id: idSorting('f'), at: at(5) },
        { id: idSorting('0'), at: at(5) },
        { id: randomUUID(), at: at(9) },
        { id: randomUUID(), at: at(1) },
      ];
      for (const [i, row] of rows.entries()) await insert(row.id, row.at, 10 + i);
      await migration.up(runner);

      const oldOrder = [rows[3], rows[1], rows[0], rows[2]].map((r) => r.id);
      const events: Array<{ id: string; seq: string }> = await runner.query(
        `SELECT id, seq FROM "gateway"."threshold_events" ORDER BY seq`,
      );
      expect(events.map((e) => [e.id, e.seq])).toEqual(oldOrder.map((id, i) => [id, String(i + 1)]));
      const nextId = randomUUID();
      await insert(nextId, at(0), 99);
      const [next]: Array<{ seq: string }> = await runner.query(
        `SELECT seq FROM "gateway"."threshold_events" WHERE id = $1`,
        [nextId],
      );
      expect(next.seq).toBe('5');
    } finally {
      await runner.release();
    }
  });
});
