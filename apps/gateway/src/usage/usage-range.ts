import { dateTimeMessage, parseDateTime } from '@app/contract';
import { ApiError } from '@app/errors';

export type Granularity = 'hour' | 'day';

export const GRANULARITIES: readonly Granularity[] = ['hour', 'day'];

/** Length of a bucket, and how many one call may ask for (31 days of hours, 400 days of days) or gets by default. */
export const USAGE_RANGE: Record<
  Granularity,
  { ms: number; maxBuckets: number; defaultBuckets: number; maxText: string; defaultText: string }
> = {
  hour: {
    ms: 3_600_000,
    maxBuckets: 31 * 24,
    defaultBuckets: 24,
    maxText: '31 days of hours',
    defaultText: 'the last 24 hours',
  },
  day: {
    ms: 86_400_000,
    maxBuckets: 400,
    defaultBuckets: 30,
    maxText: '400 days of days',
    defaultText: 'the last 30 days',
  },
};

export interface UsageRange {
  granularity: Granularity;
  from: Date;
  to: Date;
}

/** The starts of every bucket of the range, in time order (empty ones included). */
export function bucketStarts(range: UsageRange): number[] {
  const step = USAGE_RANGE[range.granularity].ms;
  const starts: number[] = [];
  for (let t = range.from.getTime(); t < range.to.getTime(); t += step) starts.push(t);
  return starts;
}

/**
 * The range a history, top or export call asks for, in UTC buckets: `from` inclusive, `to` exclusive, both at
 * the start of a bucket of the granularity (an hour, a UTC day: refused otherwise, never silently moved).
 * Defaults: granularity hour, `to` the end of the current bucket (the bucket in progress included), `from` the default span
 * before `to`. 400 when from is not before to, or the span is longer than the granularity allows.
 */
export function resolveRange(
  query: { from?: string; to?: string; granularity?: Granularity },
  now: number,
): UsageRange {
  const granularity = query.granularity ?? 'hour';
  const { ms, maxBuckets, defaultBuckets, maxText } = USAGE_RANGE[granularity];
  const unit =
    granularity === 'hour' ? 'an hour (such as 2026-11-01T13:00:00Z)' : 'a UTC day (such as 2026-11-01T00:00:00Z)';
  const aligned = (name: string, value: string): number => {
    const parsed = parseDateTime(value, 'date-time-or-date');
    if ('problem' in parsed)
      throw new ApiError('VALIDATION_FAILED', dateTimeMessage(name, 'date-time-or-date', parsed.problem));
    const time = parsed.ms;
    if (time % ms !== 0)
      throw new ApiError(
        'VALIDATION_FAILED',
        `${name} must be at the start of ${unit} with granularity=${granularity}`,
      );
    return time;
  };
  const from = query.from === undefined ? undefined : aligned('from', query.from);
  let to = query.to === undefined ? undefined : aligned('to', query.to);
  if (to === undefined)
    to = from === undefined ? now - (now % ms) + ms : Math.min(from + maxBuckets * ms, now - (now % ms) + ms);
  const start = from ?? to - defaultBuckets * ms;
  if (start >= to) throw new ApiError('VALIDATION_FAILED', 'from must be before to');
  if ((to - start) / ms > maxBuckets) {
    throw new ApiError(
      'VALIDATION_FAILED',
      `A call covers at most ${maxText} (${maxBuckets} buckets): narrow from and to, or use granularity=day`,
    );
  }
  return { granularity, from: new Date(start), to: new Date(to) };
}

/**
 * The range of a ranking (no granularity of its own): read from the daily roll-up when from and to are UTC days
 * (or omitted: the last 30 days), else from the hourly rows (hour-aligned, at most 31 days).
 */
export function resolveTopRange(query: { from?: string; to?: string }, now: number): UsageRange {
  const dayMs = USAGE_RANGE.day.ms;
  const days = [query.from, query.to].every((v) => {
    const parsed = v === undefined ? undefined : parseDateTime(v, 'date-time-or-date');
    return parsed === undefined || ('ms' in parsed && parsed.ms % dayMs === 0);
  });
  return resolveRange({ ...query, granularity: days ? 'day' : 'hour' }, now);
}
