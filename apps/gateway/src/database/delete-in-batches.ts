/** Rows deleted per statement by the retention jobs: each statement holds its row locks briefly. */
export const RETENTION_BATCH = 5_000;

/** What runs the statements: a DataSource, an EntityManager or a QueryRunner. */
interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * Deletes the rows of `table` (quoted, schema included) matching `where`, RETENTION_BATCH rows per statement,
 * `pauseMs` between statements (other writers get the table in between), until a statement deletes fewer; the
 * rows deleted. Used by the retention jobs (the audit log, the usage history).
 */
export async function deleteInBatches(
  db: Queryable,
  table: string,
  where: string,
  parameters: unknown[],
  pauseMs = 0,
): Promise<number> {
  let total = 0;
  for (;;) {
    const [, deleted] = (await db.query(
      `DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE ${where} LIMIT ${RETENTION_BATCH})`,
      parameters,
    )) as [unknown[], number];
    total += deleted;
    if (deleted < RETENTION_BATCH) return total;
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}
