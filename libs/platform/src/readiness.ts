import { Logger } from '@nestjs/common';

/**
 * One readiness answer shared by every probe for `ttlMs`: the endpoint is public (neither authenticated nor
 * limited), so it must not turn each probe into a query on a dependency. Concurrent probes share one check.
 */
export class SharedCheck<T> {
  private last?: { at: number; result: Promise<T> };

  constructor(
    private readonly ttlMs: number,
    private readonly check: () => Promise<T>,
    private readonly now: () => number = Date.now,
  ) {}

  run(): Promise<T> {
    const now = this.now();
    if (this.last && now - this.last.at < this.ttlMs) return this.last.result;
    const result = this.check();
    this.last = { at: now, result };
    return result;
  }
}

/** Logs a dependency going down once per outage (at error level) and its recovery once, not once per probe. */
export class OutageLog {
  private readonly down = new Set<string>();

  constructor(private readonly logger: Logger) {}

  report(dependency: string, up: boolean, detail = ''): void {
    if (up) {
      if (this.down.delete(dependency)) this.logger.log(`${dependency} is ready again`);
      return;
    }
    if (this.down.has(dependency)) return;
    this.down.add(dependency);
    this.logger.error(`${dependency} is not ready${detail ? `: ${detail}` : ''}`);
  }
}

/** How long a readiness answer is reused. */
export const READINESS_CACHE_MS = 1000;
