/**
 * The team's time zone (TIME_ZONE): what a plain date in a filter means, and how the pt-BR export writes date-times.
 * Offsets come from Intl (the runtime's tz database), so daylight saving time and historical rules hold.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** An IANA name, never an offset: Intl of newer runtimes also takes `+03:00`, which is no zone's rules. */
const ZONE_NAME = /^[A-Za-z][\w+/-]*$/;

/** The runtime's name for an IANA time zone (an alias such as `UTC` or `Brazil/East` included), or undefined. */
export function knownTimeZone(name: string): string | undefined {
  if (!ZONE_NAME.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** A time zone's wall clock: the offset from UTC at any instant. */
export class ZoneClock {
  private readonly format: Intl.DateTimeFormat;

  constructor(readonly timeZone: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  /** Local time minus UTC at `instant` (ms since the epoch), in milliseconds: -3 h in São Paulo. */
  offsetAt(instant: number): number {
    const fields: Record<string, number> = {};
    for (const part of this.format.formatToParts(instant)) if (part.type !== 'literal') fields[part.type] = Number(part.value);
    const local = utcMs(fields.year, fields.month, fields.day) + ((fields.hour * 60 + fields.minute) * 60 + fields.second) * 1000;
    return local - Math.floor(instant / 1000) * 1000;
  }

  /**
   * The first instant of a calendar day here: its 00:00, the earlier one when the clocks pass midnight twice, and the
   * moment they jump when midnight is skipped (São Paulo's daylight saving time began at 00:00 until 2018).
   */
  startOfDay(year: number, month: number, day: number): number {
    const midnight = utcMs(year, month, day);
    // A rule change near that midnight has the offset of the day before on one side and the day after on the other.
    const offsets = new Set([this.offsetAt(midnight - DAY_MS), this.offsetAt(midnight), this.offsetAt(midnight + DAY_MS)]);
    const candidates = [...offsets].map((offset) => midnight - offset);
    const exact = candidates.filter((instant) => this.local(instant) === midnight);
    if (exact.length) return Math.min(...exact);
    // Midnight falls in a gap: the first instant whose local time is past it, between the two readings.
    let before = Math.min(...candidates);
    let after = Math.max(...candidates);
    while (after - before > 1) {
      const middle = Math.floor((before + after) / 2);
      if (this.local(middle) >= midnight) after = middle;
      else before = middle;
    }
    return after;
  }

  /** The wall-clock reading at `instant`, as the UTC instant with the same fields. */
  private local(instant: number): number {
    return instant + this.offsetAt(instant);
  }
}

const clocks = new Map<string, ZoneClock>();

/** One clock per zone for the process (an Intl.DateTimeFormat costs tens of microseconds to build). */
export function zoneClock(timeZone: string): ZoneClock {
  let clock = clocks.get(timeZone);
  if (!clock) clocks.set(timeZone, (clock = new ZoneClock(timeZone)));
  return clock;
}

/**
 * A formatter of instants as `dd/mm/aaaa hh:mm:ss` on the zone's wall clock, no offset (what a spreadsheet in a pt-BR
 * locale reads as a date-time), for one export: it asks Intl for the offset once per hour of UTC it meets and does
 * the rest with arithmetic, since exports write hundreds of thousands of date-times. An hour in which the offset
 * changes is read per instant.
 */
export function localDateTimeFormatter(timeZone: string): (instant: number) => string {
  const clock = zoneClock(timeZone);
  const offsets = new Map<number, number | null>();
  return (instant) => {
    const hour = Math.floor(instant / HOUR_MS);
    let offset = offsets.get(hour);
    if (offset === undefined) {
      const first = clock.offsetAt(hour * HOUR_MS);
      offset = first === clock.offsetAt(hour * HOUR_MS + HOUR_MS - 1) ? first : null;
      // Leads are written newest first, so the hours met are few and in order; the bound is for the odd old one.
      if (offsets.size >= 10_000) offsets.clear();
      offsets.set(hour, offset);
    }
    const local = new Date(instant + (offset ?? clock.offsetAt(instant)));
    return `${pad(local.getUTCDate())}/${pad(local.getUTCMonth() + 1)}/${String(local.getUTCFullYear()).padStart(4, '0')} ${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}`;
  };
}

const pad = (n: number) => (n < 10 ? `0${n}` : String(n));

/** Date.UTC without its mapping of years 0 to 99 onto 1900 to 1999. */
export function utcMs(year: number, month: number, day: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime();
}
