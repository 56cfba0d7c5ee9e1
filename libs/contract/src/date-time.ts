import { ValidateBy, ValidationOptions } from 'class-validator';

/**
 * The one parser of dates and date-times that the apps take from outside (docs/errors.md, "Dates and date-times").
 * It accepts exactly the forms the documents name, and nothing that merely looks like them:
 *
 * - `date-time`: RFC 3339's profile of ISO 8601, `YYYY-MM-DDTHH:MM:SS(.fraction)?(Z|±HH:MM)` (a `T` and a `Z` in
 *   capitals, seconds required, an offset required). The admin API's `billingAnchor`, `expiresAt`, audit filters,
 *   the consumers file's dates.
 * - `date-time-or-date`: the usage history's `from`/`to`, which its document names as a date-time whose seconds
 *   may be left out, or a bare date `YYYY-MM-DD` (UTC midnight).
 *
 * Refused, with a 400 by the decorator: a date alone where a date-time is asked, ISO 8601's week (`2026-W48-1`),
 * ordinal (`2026-333`) and basic (`20261129T100000Z`) forms, a local time without an offset, lower-case `t`/`z`,
 * a sign or more than four digits in the year, a day the month does not have, hour 24, a leap second, an offset
 * beyond ±23:59, and years before 0001. A four-digit year keeps every accepted value far inside what a JavaScript
 * Date (±275760 years) and PostgreSQL's timestamptz hold: no accepted value can fail later (a 500).
 */
export type DateTimeForm = 'date-time' | 'date-time-or-date';

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;
const DATE_TIME_OR_DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|([+-])(\d{2}):(\d{2})))?$/;

/** The wording of each form in a refusal ("`from` must be …"), the same since the first of these rules. */
export const DATE_TIME_FORMS: Record<DateTimeForm, string> = {
  'date-time': 'an ISO 8601 date-time',
  'date-time-or-date': 'an ISO 8601 date-time with Z or an offset (2026-11-01T00:00:00Z), or a date',
};

/** Each form as the OpenAPI document and the docs spell it out. */
export const DATE_TIME_SYNTAX: Record<DateTimeForm, string> = {
  'date-time':
    'An ISO 8601 date-time, exactly YYYY-MM-DDTHH:MM:SS(.fraction)?(Z|±HH:MM) (2026-11-29T10:00:00Z): a date alone, week (2026-W48-1), ordinal (2026-333) and basic (20261129T100000Z) forms are refused.',
  'date-time-or-date':
    'An ISO 8601 date-time YYYY-MM-DDTHH:MM(:SS(.fraction)?)?(Z|±HH:MM), or a date YYYY-MM-DD (UTC midnight); week, ordinal and basic forms are refused.',
};

const daysIn = (year: number, month: number): number =>
  month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : [4, 6, 9, 11].includes(month)
      ? 30
      : 31;

/** Why a value is refused: not in the form at all, or in the form but not a real instant (2026-02-30). */
export type DateTimeProblem = 'form' | 'not-real';

/** The instant `value` names, in ms since the epoch, or why it is refused. */
export function parseDateTime(value: unknown, form: DateTimeForm): { ms: number } | { problem: DateTimeProblem } {
  if (typeof value !== 'string') return { problem: 'form' };
  const match = (form === 'date-time' ? DATE_TIME : DATE_TIME_OR_DATE).exec(value);
  if (!match) return { problem: 'form' };
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', sign, oh = '0', om = '0'] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number);
  const [offsetHours, offsetMinutes] = [Number(oh), Number(om)];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return { problem: 'not-real' };
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return { problem: 'not-real' };
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0-99 as 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, Number(fraction.padEnd(3, '0').slice(0, 3)));
  const offsetMs = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return { ms: date.getTime() - offsetMs };
}

/** The instant of a value a decorator below has already accepted (a programming error otherwise). */
export function dateTimeOf(value: string, form: DateTimeForm = 'date-time'): Date {
  const parsed = parseDateTime(value, form);
  if (!('ms' in parsed)) throw new TypeError(`not a validated ${form}: ${JSON.stringify(value)}`);
  return new Date(parsed.ms);
}

/** The message of a refusal: "`field` must be <the form>", or "`field` is not a real date". */
export function dateTimeMessage(field: string, form: DateTimeForm, problem: DateTimeProblem): string {
  return problem === 'not-real' ? `${field} is not a real date` : `${field} must be ${DATE_TIME_FORMS[form]}`;
}

/** A field holding a date-time in the documented form only (parseDateTime): 400 VALIDATION_FAILED otherwise. */
export function IsDateTime(form: DateTimeForm = 'date-time', options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isDateTime',
      constraints: [form],
      validator: {
        validate: (value: unknown) => 'ms' in parseDateTime(value, form),
        defaultMessage: (args) => {
          const parsed = parseDateTime(args?.value, form);
          return dateTimeMessage('$property', form, 'problem' in parsed ? parsed.problem : 'form');
        },
      },
    },
    options,
  );
}
