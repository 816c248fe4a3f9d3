import fc from 'fast-check';
import { knownTimeZone, localDateTimeFormatter, zoneClock } from './time-zone.js';

const ZONES = ['America/Sao_Paulo', 'America/New_York', 'Europe/Lisbon', 'Australia/Adelaide', 'Asia/Kathmandu', 'Pacific/Chatham', 'UTC'];

describe('knownTimeZone', () => {
  it.each([
    ['America/Sao_Paulo', 'America/Sao_Paulo'],
    ['UTC', 'UTC'],
    ['america/SAO_PAULO', 'America/Sao_Paulo'],
  ])('knows %s as %s', (name, zone) => expect(knownTimeZone(name)).toBe(zone));

  it.each(['Nowhere/City', '-03:00', '+0300', 'BRT', '', ' UTC'])('does not know %j', (name) => expect(knownTimeZone(name)).toBeUndefined());
});

describe('ZoneClock.startOfDay', () => {
  it.each([
    ['America/Sao_Paulo', [2026, 11, 27], '2026-11-27T03:00:00.000Z'],
    // Summer time (-02:00) began at 00:00: 2018-11-04 began at 01:00, when the clocks jumped.
    ['America/Sao_Paulo', [2018, 11, 4], '2018-11-04T03:00:00.000Z'],
    ['America/Sao_Paulo', [2018, 11, 5], '2018-11-05T02:00:00.000Z'],
    // It ended at 00:00 of 2019-02-17, back to 23:00 of the 16th: the 16th had 25 hours.
    ['America/Sao_Paulo', [2019, 2, 16], '2019-02-16T02:00:00.000Z'],
    ['America/Sao_Paulo', [2019, 2, 17], '2019-02-17T03:00:00.000Z'],
    ['America/New_York', [2026, 3, 8], '2026-03-08T05:00:00.000Z'],
    ['America/New_York', [2026, 3, 9], '2026-03-09T04:00:00.000Z'],
    ['Europe/Lisbon', [2026, 7, 1], '2026-06-30T23:00:00.000Z'],
    ['Asia/Kathmandu', [2026, 1, 1], '2025-12-31T18:15:00.000Z'],
    ['UTC', [2026, 11, 27], '2026-11-27T00:00:00.000Z'],
  ] as const)('in %s, %j begins at %s', (zone, [year, month, day], instant) => {
    expect(new Date(zoneClock(zone).startOfDay(year, month, day)).toISOString()).toBe(instant);
  });

  it('is the first instant whose local date is that day, in any zone and on any day', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.date({ min: new Date('1950-01-01T00:00:00Z'), max: new Date('2060-12-31T00:00:00Z'), noInvalidDate: true }),
        (zone, date) => {
          const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
          const start = zoneClock(zone).startOfDay(year, month, day);
          const dateOf = (instant: number) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, dateStyle: 'short' }).format(instant);
          const expected = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
          expect([dateOf(start), dateOf(start - 1) < expected]).toEqual([expected, true]);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('localDateTimeFormatter', () => {
  it('writes what Intl writes for the zone, to the second, across its rule changes', () => {
    const intl = (zone: string) =>
      new Intl.DateTimeFormat('pt-BR', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      });
    const formatters = new Map(ZONES.map((zone) => [zone, localDateTimeFormatter(zone)]));
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.integer({ min: Date.parse('1970-01-01T00:00:00Z'), max: Date.parse('2060-01-01T00:00:00Z') }),
        (zone, instant) => {
          expect(formatters.get(zone)!(instant)).toBe(intl(zone).format(instant).replace(', ', ' '));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
