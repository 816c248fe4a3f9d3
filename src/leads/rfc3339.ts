import { utcMs as utc } from '../time/time-zone.js';

/**
 * An RFC 3339 date-time (§5.6): a full date, `T`, a time with an optional fraction, and a time zone (`Z` or ±hh:mm),
 * which is not optional. `T` and `Z` in either case; no leap second (:60 is no instant of the clocks that stored leads).
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Years 0001 to 9999 in UTC: what both databases store and compare in order (SQLite as text). */
const EARLIEST = utc(1, 1, 1);
const LATEST = utc(10000, 1, 1) - 1;

/**
 * The instant an RFC 3339 date-time names, or undefined when the text is not one (or names a day that does not exist).
 * Digits after the milliseconds round up: leads are stored to the millisecond, so `since=…00.0001Z` (inclusive) and
 * `until=…00.0001Z` (exclusive) select exactly the stored instants they would select at full precision.
 */
export function parseDateTime(text: string): Date | undefined {
  const match = DATE_TIME.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return undefined;
  const fraction = match[7] ?? '';
  const milliseconds = Number(fraction.slice(0, 3).padEnd(3, '0')) + (/[1-9]/.test(fraction.slice(3)) ? 1 : 0);
  const [sign, offsetHours, offsetMinutes] = [match[8], Number(match[9]), Number(match[10])];
  if (sign !== undefined && (offsetHours > 23 || offsetMinutes > 59)) return undefined;
  const offset = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  const time = utc(year, month, day) + ((hour * 60 + minute) * 60 + second) * 1000 + milliseconds - offset;
  return time < EARLIEST || time > LATEST ? undefined : new Date(time);
}

/** An RFC 3339 full-date (§5.6), a day with no time or zone: what a person types, `2026-11-27`. */
const FULL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar day, which a time zone makes a span of instants. */
export class CalendarDay {
  constructor(
    readonly year: number,
    readonly month: number,
    readonly day: number,
  ) {}

  /** The day after (0001-01-01 to 9999-12-31 follow each other; 9999-12-31's is 10000-01-01). */
  next(): CalendarDay {
    const date = new Date(utc(this.year, this.month, this.day + 1));
    return new CalendarDay(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate());
  }
}

/** The day an RFC 3339 full-date names (years 0001 to 9999), or undefined when the text is not one or the day does not exist. */
export function parseFullDate(text: string): CalendarDay | undefined {
  const match = FULL_DATE.exec(text);
  if (!match) return undefined;
  const [year, month, day] = match.slice(1).map(Number);
  return year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) ? undefined : new CalendarDay(year, month, day);
}

/** The earliest and latest instants a filter may name: what both databases store and compare in order. */
export const INSTANT_RANGE = { earliest: EARLIEST, latest: LATEST } as const;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
