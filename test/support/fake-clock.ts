import { Clock } from '../../apps/gateway/src/clock';

/** Real time, shifted by hand: a test can jump to a date (a sunset) while windows still pass in real time. */
export class FakeClock extends Clock {
  private offsetMs = 0;
  private monotonicOffsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  override monotonic(): number {
    return performance.now() + this.monotonicOffsetMs;
  }
  /** From now on, the clock reads `time` and runs on from there (durations, such as cache TTLs, do not move). */
  set(time: number): void {
    this.offsetMs = time - Date.now();
  }
  /** Time passes by `ms` at once, for dates and durations alike (cache TTLs run out). */
  advance(ms: number): void {
    this.offsetMs += ms;
    this.monotonicOffsetMs += ms;
  }
  reset(): void {
    this.offsetMs = 0;
    this.monotonicOffsetMs = 0;
  }
}
