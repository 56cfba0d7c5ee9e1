import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { dateTimeOf, IsDateTime, parseDateTime } from './date-time';

describe('parseDateTime', () => {
  it.each([
    ['2026-11-29T10:00:00Z', Date.UTC(2026, 10, 29, 10)],
    ['2026-11-29T10:00:00.5Z', Date.UTC(2026, 10, 29, 10, 0, 0, 500)],
    ['2026-11-29T10:00:00.123456789Z', Date.UTC(2026, 10, 29, 10, 0, 0, 123)],
    ['2026-11-29T12:30:00+02:30', Date.UTC(2026, 10, 29, 10)],
    ['2026-11-29T05:00:00-05:00', Date.UTC(2026, 10, 29, 10)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['9999-12-31T23:59:59Z', Date.UTC(9999, 11, 31, 23, 59, 59)],
    ['0001-01-01T00:00:00Z', -62_135_596_800_000],
    ['0099-06-01T00:00:00Z', -59_029_948_800_000],
  ])('takes the date-time %s', (text, ms) => {
    expect(parseDateTime(text, 'date-time')).toEqual({ ms });
    expect(dateTimeOf(text).getTime()).toBe(ms);
  });

  it.each([
    ['2026-11-29', 'a date alone'],
    ['2026-W48-1T00:00:00Z', 'ISO week'],
    ['2026-333T00:00:00Z', 'ordinal'],
    ['20261129T100000Z', 'basic'],
    ['2026-11-29T10:00Z', 'no seconds'],
    ['2026-11-29T10:00:00', 'no offset (a local time)'],
    ['2026-11-29t10:00:00z', 'lower case'],
    ['2026-11-29 10:00:00Z', 'a space for T'],
    ['+275760-09-13T00:00:00Z', 'an extended year'],
    ['+002026-11-29T10:00:00Z', 'a signed year'],
    ['-000001-01-01T00:00:00Z', 'a negative year'],
    ['2026-11-29T10:00:00+0200', 'an offset without colon'],
    ['2026-11-29T10:00:00.Z', 'an empty fraction'],
    ['2026-11-29T10:00:00,5Z', 'a comma fraction'],
    ['2026-11-29T10:00:00Z ', 'a trailing space'],
    ['2026-11-29T10:00:00Z\n', 'a trailing line break'],
    ['٢٠٢٦-11-29T10:00:00Z', 'non-ASCII digits'],
  ])('refuses %s (%s) as not in the form', (text) => {
    expect(parseDateTime(text, 'date-time')).toEqual({ problem: 'form' });
  });

  it.each([
    '2026-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-11-29T24:00:00Z',
    '2026-11-29T10:60:00Z',
    '2026-12-31T23:59:60Z',
    '2026-11-29T10:00:00+24:00',
    '0000-01-01T00:00:00Z',
  ])('refuses %s as not a real instant', (text) => {
    expect(parseDateTime(text, 'date-time')).toEqual({ problem: 'not-real' });
  });

  it('takes a date, and a date-time without seconds, only in the usage form', () => {
    expect(parseDateTime('2026-11-01', 'date-time-or-date')).toEqual({ ms: Date.UTC(2026, 10, 1) });
    expect(parseDateTime('2026-11-01T13:00+01:00', 'date-time-or-date')).toEqual({ ms: Date.UTC(2026, 10, 1, 12) });
    expect(parseDateTime('2026-11-01T13:00', 'date-time-or-date')).toEqual({ problem: 'form' });
    expect(parseDateTime('2026-W44', 'date-time-or-date')).toEqual({ problem: 'form' });
    expect(parseDateTime('2026-02-30', 'date-time-or-date')).toEqual({ problem: 'not-real' });
  });

  it('keeps every accepted value inside what a Date writes (toISOString never throws)', () => {
    for (const text of ['9999-12-31T23:59:59.999-23:59', '0001-01-01T00:00:00+23:59']) {
      expect(() => dateTimeOf(text).toISOString()).not.toThrow();
    }
  });
});

describe('IsDateTime', () => {
  class Body {
    @IsDateTime()
    billingAnchor!: unknown;
  }
  const messages = (value: unknown) =>
    validateSync(plainToInstance(Body, { billingAnchor: value })).flatMap((e) => Object.values(e.constraints ?? {}));

  it('names the field and the rule, and tells a form from a day the month does not have', () => {
    expect(messages('2026-11-29T10:00:00Z')).toEqual([]);
    expect(messages('2026-W48-1T00:00:00Z')).toEqual(['billingAnchor must be an ISO 8601 date-time']);
    expect(messages(20261129)).toEqual(['billingAnchor must be an ISO 8601 date-time']);
    expect(messages('2026-02-30T00:00:00Z')).toEqual(['billingAnchor is not a real date']);
  });
});
