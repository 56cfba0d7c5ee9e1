/**
 * The wait before attempt `attempts + 1` of a batch whose attempt `attempts` (1 or more) failed: `baseMs`
 * doubled per failed attempt, at most `maxMs`, spread by ±20 % (`random` in [0, 1)) so that a fleet of
 * exporters brought back together does not retry in step.
 */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number, random: number): number {
  const exponential = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30));
  return Math.round(exponential * (0.8 + 0.4 * random));
}
