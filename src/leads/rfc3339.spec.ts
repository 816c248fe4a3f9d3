import { CalendarDay, parseDateTime, parseFullDate } from './rfc3339.js';

describe('parseDateTime (RFC 3339 date-time, time zone required)', () => {
  it.each([
    ['2026-11-22T13:45:14Z', '2026-11-22T13:45:14.000Z'],
    ['2026-11-22t13:45:14z', '2026-11-22T13:45:14.000Z'],
    ['2026-11-22T13:45:14.345Z', '2026-11-22T13:45:14.345Z'],
    ['2026-11-22T13:45:14.3Z', '2026-11-22T13:45:14.300Z'],
    ['2026-11-22T10:45:14-03:00', '2026-11-22T13:45:14.000Z'],
    ['2026-11-22T23:30:00+05:30', '2026-11-22T18:00:00.000Z'],
    ['2026-11-22T00:00:00-00:00', '2026-11-22T00:00:00.000Z'],
    ['2026-12-31T23:00:00-02:00', '2027-01-01T01:00:00.000Z'],
    ['2028-02-29T12:00:00Z', '2028-02-29T12:00:00.000Z'],
    ['2000-02-29T12:00:00Z', '2000-02-29T12:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    // Beyond the millisecond: any further digit rounds up, zeros do not.
    ['2026-11-22T13:45:14.345000000Z', '2026-11-22T13:45:14.345Z'],
    ['2026-11-22T13:45:14.3450001Z', '2026-11-22T13:45:14.346Z'],
    ['2026-11-22T13:45:14.9999Z', '2026-11-22T13:45:15.000Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(parseDateTime(text)?.toISOString()).toBe(iso);
  });

  it.each([
    ['no time zone', '2026-11-22T13:45:14'],
    ['a date alone', '2026-11-22'],
    ['a space for T', '2026-11-22 13:45:14Z'],
    ['an offset without colon', '2026-11-22T13:45:14+0300'],
    ['an hour-only offset', '2026-11-22T13:45:14+03'],
    ['an empty fraction', '2026-11-22T13:45:14.Z'],
    ['February 30', '2026-02-30T00:00:00Z'],
    ['February 29 of a common year', '2026-02-29T00:00:00Z'],
    ['February 29 of 1900', '1900-02-29T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['day 0', '2026-11-00T00:00:00Z'],
    ['hour 24', '2026-11-22T24:00:00Z'],
    ['a leap second', '2016-12-31T23:59:60Z'],
    ['offset minutes 60', '2026-11-22T13:45:14+01:60'],
    ['an instant before year 1', '0001-01-01T00:00:00+00:01'],
    ['an instant after year 9999', '9999-12-31T23:59:59-00:01'],
    ['epoch seconds', '1795000000'],
    ['a date JavaScript would take', 'Sun, 22 Nov 2026 13:45:14 GMT'],
    ['surrounding space', ' 2026-11-22T13:45:14Z'],
    ['a six-digit year', '+002026-11-22T13:45:14Z'],
    ['non-ASCII digits', '２026-11-22T13:45:14Z'],
    ['empty', ''],
  ])('refuses %s', (_name, text) => {
    expect(parseDateTime(text)).toBeUndefined();
  });
});

describe('parseFullDate (RFC 3339 full-date: a day, no time, no zone)', () => {
  it.each([
    ['2026-11-27', [2026, 11, 27]],
    ['2028-02-29', [2028, 2, 29]],
    ['0001-01-01', [1, 1, 1]],
    ['9999-12-31', [9999, 12, 31]],
  ])('reads %s', (text, [year, month, day]) => {
    expect(parseFullDate(text)).toEqual(new CalendarDay(year, month, day));
  });

  it.each([
    '2026-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-04-31',
    '0000-01-01',
    '2026-11-27Z',
    '2026-11-27T00:00:00Z',
    '27/11/2026',
    '2026-1-7',
    ' 2026-11-27',
    '２026-11-27',
    '',
  ])('refuses %j', (text) => {
    expect(parseFullDate(text)).toBeUndefined();
  });

  it.each([
    [new CalendarDay(2026, 11, 30), new CalendarDay(2026, 12, 1)],
    [new CalendarDay(2028, 2, 28), new CalendarDay(2028, 2, 29)],
    [new CalendarDay(2026, 12, 31), new CalendarDay(2027, 1, 1)],
    [new CalendarDay(99, 12, 31), new CalendarDay(100, 1, 1)],
  ])('knows the day after %j', (day, next) => {
    expect(day.next()).toEqual(next);
  });
});
