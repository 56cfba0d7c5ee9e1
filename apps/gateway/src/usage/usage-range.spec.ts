import { ApiError } from '@app/errors';
import { bucketStarts, resolveRange, resolveTopRange } from './usage-range';

const NOW = Date.parse('2026-11-24T15:42:10Z');
const iso = (range: { from: Date; to: Date }) => [range.from.toISOString(), range.to.toISOString()];

describe('resolveRange', () => {
  it('defaults to the last 24 hours or 30 days, the bucket in progress included', () => {
    expect(iso(resolveRange({}, NOW))).toEqual(['2026-11-23T16:00:00.000Z', '2026-11-24T16:00:00.000Z']);
    expect(iso(resolveRange({ granularity: 'day' }, NOW))).toEqual([
      '2026-10-26T00:00:00.000Z',
      '2026-11-25T00:00:00.000Z',
    ]);
    expect(bucketStarts(resolveRange({}, NOW))).toHaveLength(24);
  });

  it('takes from alone (up to now, at most the longest range) and to alone (the default span before it)', () => {
    expect(iso(resolveRange({ from: '2026-11-24T10:00:00Z' }, NOW))).toEqual([
      '2026-11-24T10:00:00.000Z',
      '2026-11-24T16:00:00.000Z',
    ]);
    expect(iso(resolveRange({ from: '2026-01-01', granularity: 'day' }, NOW))).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-11-25T00:00:00.000Z',
    ]);
    expect(iso(resolveRange({ from: '2025-01-01', granularity: 'day' }, NOW))).toEqual([
      '2025-01-01T00:00:00.000Z',
      '2026-02-05T00:00:00.000Z',
    ]);
    expect(iso(resolveRange({ to: '2026-11-01' }, NOW))).toEqual([
      '2026-10-31T00:00:00.000Z',
      '2026-11-01T00:00:00.000Z',
    ]);
  });

  it('reads an offset as the instant it names', () => {
    expect(iso(resolveRange({ from: '2026-11-01T02:00:00+02:00', to: '2026-11-01T03:00:00Z' }, NOW))).toEqual([
      '2026-11-01T00:00:00.000Z',
      '2026-11-01T03:00:00.000Z',
    ]);
  });

  it('refuses what is not aligned, backwards, too long or not a date', () => {
    for (const query of [
      { from: '2026-11-01T00:00:01Z' },
      { from: '2026-11-01T05:00:00Z', granularity: 'day' as const },
      { from: '2026-11-02', to: '2026-11-01' },
      { from: '2026-10-01', to: '2026-11-01T01:00:00Z' },
      { from: '2026-02-29' },
    ]) {
      expect(() => resolveRange(query, NOW)).toThrow(ApiError);
    }
  });
});

describe('resolveTopRange', () => {
  it('reads UTC days when from and to are days (or omitted), else hours', () => {
    expect(resolveTopRange({}, NOW).granularity).toBe('day');
    expect(resolveTopRange({ from: '2026-11-01', to: '2026-11-24' }, NOW).granularity).toBe('day');
    expect(resolveTopRange({ from: '2026-11-24T10:00:00Z' }, NOW).granularity).toBe('hour');
  });
});
