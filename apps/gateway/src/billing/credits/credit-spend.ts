const DAY_MS = 86_400_000;

/** A UTC day as the spend table keys it: YYYY-MM-DD. */
export const utcDay = (ms: number): string =>
  new Date(ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS)).toISOString().slice(0, 10);

/**
 * Credits spent on this instance since the last flush, per consumer and UTC day (the request path pays one map
 * lookup and an addition). A crash loses at most one flush interval of it: see docs/billing.md for whose favour.
 */
export class CreditSpendRecorder {
  private held = new Map<string, number>();

  /** `consumer` spent `cost` at `nowMs`. */
  add(consumer: string, cost: number, nowMs: number): void {
    const key = `${consumer}\n${utcDay(nowMs)}`;
    this.held.set(key, (this.held.get(key) ?? 0) + cost);
  }

  /** What this instance holds for `consumer`, not yet in the database. */
  pending(consumer: string): number {
    let total = 0;
    const prefix = `${consumer}\n`;
    for (const [key, spent] of this.held) if (key.startsWith(prefix)) total += spent;
    return total;
  }

  /** What this instance holds for `consumer` on `day`, not yet in the database. */
  pendingOn(consumer: string, day: string): number {
    return this.held.get(`${consumer}\n${day}`) ?? 0;
  }

  /** Everything held, for a flush; the recorder starts empty. */
  drain(): Array<{ consumer: string; day: string; spent: number }> {
    const rows = [...this.held].map(([key, spent]) => {
      const [consumer, day] = key.split('\n');
      return { consumer, day, spent };
    });
    this.held = new Map();
    return rows;
  }

  /** A batch that could not be written, counted in again. */
  restore(rows: Array<{ consumer: string; day: string; spent: number }>): void {
    for (const row of rows) {
      const key = `${row.consumer}\n${row.day}`;
      this.held.set(key, (this.held.get(key) ?? 0) + row.spent);
    }
  }
}
