const DAY_MS = 86_400_000;

/** A UTC day as the spend table keys it: YYYY-MM-DD. */
export const utcDay = (ms: number): string =>
  new Date(ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS)).toISOString().slice(0, 10);

type SpendRow = { consumer: string; day: string; spent: number };

/**
 * Credits spent on this instance and not yet in the database, per consumer and UTC day (the request path pays one
 * map lookup and an addition): what is held since the last flush, and what a flush has taken and not yet written
 * (still this instance's to show until the write commits). A crash loses at most one flush interval of it: see
 * docs/billing.md for whose loss.
 */
export class CreditSpendRecorder {
  private held = new Map<string, number>();
  private writing = new Map<string, number>();

  /** `consumer` spent `cost` at `nowMs`. */
  add(consumer: string, cost: number, nowMs: number): void {
    const key = `${consumer}\n${utcDay(nowMs)}`;
    this.held.set(key, (this.held.get(key) ?? 0) + cost);
  }

  /** What this instance holds for `consumer`, not yet in the database (held or being written). */
  pending(consumer: string): number {
    let total = 0;
    const prefix = `${consumer}\n`;
    for (const map of [this.held, this.writing])
      for (const [key, spent] of map) if (key.startsWith(prefix)) total += spent;
    return total;
  }

  /** What this instance holds for `consumer` on `day`, not yet in the database (held or being written). */
  pendingOn(consumer: string, day: string): number {
    const key = `${consumer}\n${day}`;
    return (this.held.get(key) ?? 0) + (this.writing.get(key) ?? 0);
  }

  /** Everything held, for a flush: it stays pending (being written) until `written` or `restore`. */
  drain(): SpendRow[] {
    const rows: SpendRow[] = [];
    for (const [key, spent] of this.held) {
      const [consumer, day] = key.split('\n');
      rows.push({ consumer, day, spent });
      this.writing.set(key, (this.writing.get(key) ?? 0) + spent);
    }
    this.held = new Map();
    return rows;
  }

  /** A drained batch is in the database (or was dropped by a fence): no longer this instance's. */
  written(rows: SpendRow[]): void {
    this.forget(rows);
  }

  /** A drained batch that could not be written: held again, for the next flush. */
  restore(rows: SpendRow[]): void {
    this.forget(rows);
    for (const row of rows) {
      const key = `${row.consumer}\n${row.day}`;
      this.held.set(key, (this.held.get(key) ?? 0) + row.spent);
    }
  }

  private forget(rows: SpendRow[]): void {
    for (const row of rows) {
      const key = `${row.consumer}\n${row.day}`;
      const left = (this.writing.get(key) ?? 0) - row.spent;
      if (left > 0) this.writing.set(key, left);
      else this.writing.delete(key);
    }
  }
}
