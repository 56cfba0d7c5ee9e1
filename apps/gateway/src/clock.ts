/** The gateway's sense of time, injectable so that tests can cross a sunset date or a window's end. */
export abstract class Clock {
  abstract now(): number;

  /** Milliseconds on a monotonic clock, for durations (cache TTLs, budgets): it never jumps with the wall clock. */
  monotonic(): number {
    return performance.now();
  }
}

export class SystemClock extends Clock {
  now(): number {
    return Date.now();
  }
}
