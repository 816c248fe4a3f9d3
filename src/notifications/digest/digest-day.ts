import { utcMs, zoneClock } from '../../time/time-zone.js';

/** A digest's day: the local calendar day it reports on, its window of instants, and when its e-mail is due. */
export interface DigestDay {
  /** The day reported on, YYYY-MM-DD on the TIME_ZONE clock (the day before the one it is sent). */
  day: string;
  /** The day's first instant (inclusive) and the next day's (exclusive), as the leads filter reads them. */
  since: Date;
  until: Date;
  /** NOTIFY_DIGEST_AT on the day after `day`: the digest is sent from then until that day ends. */
  dueAt: number;
}

const MINUTE_MS = 60_000;

/**
 * The digest that `instant` falls on: the one sent today (on the zone's clock) about yesterday. Its `dueAt` may be
 * still ahead of `instant` (before the configured time) or behind it (a missed time: still due until midnight).
 */
export function digestDayAt(instant: number, timeZone: string, at: { hour: number; minute: number }): DigestDay {
  const clock = zoneClock(timeZone);
  const local = new Date(instant + clock.offsetAt(instant));
  const [year, month, date] = [local.getUTCFullYear(), local.getUTCMonth() + 1, local.getUTCDate()];
  const yesterday = new Date(utcMs(year, month, date - 1));
  const since = clock.startOfDay(yesterday.getUTCFullYear(), yesterday.getUTCMonth() + 1, yesterday.getUTCDate());
  const until = clock.startOfDay(year, month, date);
  // The wall-clock time's instant: its reading minus the offset then (read twice, in case the offset changes between).
  const wall = utcMs(year, month, date) + (at.hour * 60 + at.minute) * MINUTE_MS;
  const dueAt = wall - clock.offsetAt(wall - clock.offsetAt(wall));
  return { day: isoDate(yesterday), since: new Date(since), until: new Date(until), dueAt };
}

function isoDate(day: Date): string {
  return `${String(day.getUTCFullYear()).padStart(4, '0')}-${String(day.getUTCMonth() + 1).padStart(2, '0')}-${String(day.getUTCDate()).padStart(2, '0')}`;
}
