/** A token bucket refilled at `rate` a second, holding at most a second's worth (`rate` ≥ 1). Times in ms. */
export class TokenBucket {
  private tokens: number;

  constructor(
    readonly rate: number,
    private refilledAt: number,
  ) {
    this.tokens = rate;
  }

  take(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** How long until `take` can succeed (0: it can now). */
  msUntilToken(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : ((1 - this.tokens) / this.rate) * 1000;
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.refilledAt) / 1000) * this.rate);
    this.refilledAt = now;
  }
}
