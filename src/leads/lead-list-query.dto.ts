import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateBy } from 'class-validator';
import { invalidQuery } from '../problem/app-error.js';
import { SCREENING_VERDICTS, ScreeningVerdict } from '../screening/screening.js';
import { zoneClock } from '../time/time-zone.js';
import { LEAD_CHANNELS, LeadChannel } from './lead-channel.js';
import { LEAD_FIELDS } from './lead-rules.js';
import { MAX_QUERY_LENGTH, searchPhrases } from './lead-search.js';
import { LeadFilter, MAX_PAGE_SIZE } from './lead-reader.service.js';
import { CalendarDay, INSTANT_RANGE, parseDateTime, parseFullDate } from './rfc3339.js';

/** Digits become a number for the range rules; anything else stays as sent, for IsInt to refuse. */
const integer = ({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value);
/** An RFC 3339 date-time becomes its instant, a full-date its CalendarDay; anything else stays as sent, to be refused. */
const dateOrDateTime = ({ value }: { value: unknown }) => (typeof value === 'string' ? (parseDateTime(value) ?? parseFullDate(value) ?? value) : value);
const isDateOrDateTime = (message: string) =>
  ValidateBy({ name: 'isDateOrDateTime', validator: { validate: (value) => value instanceof Date || value instanceof CalendarDay } }, { message });

/** Stored values never hold control characters (lead-rules refuses them), and PostgreSQL errs on a NUL in a text parameter. */
const NO_CONTROLS = /^\P{Cc}*$/u;
const noControls = (name: string) => Matches(NO_CONTROLS, { message: `${name} must not contain control characters.` });

const CHANNEL = `channel must be ${LEAD_CHANNELS.join(', ')}.`;
const Q = `q must be 1 to ${MAX_QUERY_LENGTH} characters: words that start a word of the lead's nome, e-mail or empresa (accents and letter case aside).`;
/** At most `max` code points (class-validator's MaxLength counts some pairs as one, and variation selectors as none). */
const MaxCodePoints = (max: number, options: { message: string }) =>
  ValidateBy({ name: 'maxLength', validator: { validate: (value) => typeof value === 'string' && [...value].length <= max } }, options);
/** A search with no letter or digit would match nothing: refused, so that the caller learns why. */
const searchable = () =>
  ValidateBy(
    { name: 'searchable', validator: { validate: (value) => typeof value === 'string' && searchPhrases(value).length > 0 } },
    { message: 'q must hold at least one letter or digit: punctuation and spaces only separate words.' },
  );

const LIMIT = `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`;

/**
 * An optional `limit` of a page: an integer from 1 to MAX_PAGE_SIZE (every paged list's query). In the order stacked
 * decorators run, bottom up: the first failing rule names the problem's code.
 */
export const PageLimit = () =>
  applyDecorators(Max(MAX_PAGE_SIZE, { message: LIMIT }), Min(1, { message: LIMIT }), IsInt({ message: LIMIT }), Transform(integer), IsOptional());
const DATE_OR_DATE_TIME = (name: string, day: string) =>
  `${name} must be a date such as 2026-11-27 (${day} in the service's time zone) or an RFC 3339 date-time with a time zone, such as 2026-11-22T13:45:14Z or 2026-11-22T10:45:14-03:00.`;

/** What `screening` selects: one verdict, or every lead. */
export const SCREENING_FILTERS = [...SCREENING_VERDICTS, 'all'] as const;
export type ScreeningFilter = (typeof SCREENING_FILTERS)[number];
/** Only accepted leads unless asked: held and spam leads wait for a person who asks for them. */
export const DEFAULT_SCREENING: ScreeningFilter = 'accepted';
const SCREENING = `screening must be ${SCREENING_FILTERS.join(', ')} (the default is ${DEFAULT_SCREENING}).`;

/** The filters of GET /api/v1/leads and GET /api/v1/leads/export: one set of rules for both. */
export class LeadFilterQuery {
  @IsOptional() @Transform(dateOrDateTime) @isDateOrDateTime(DATE_OR_DATE_TIME('since', 'from 00:00 of that day')) since?: Date | CalendarDay;

  @IsOptional() @Transform(dateOrDateTime) @isDateOrDateTime(DATE_OR_DATE_TIME('until', 'through the end of that day')) until?: Date | CalendarDay;

  // No longer than a stored value can be: a longer one would only ever match nothing.
  @IsOptional() @IsString() @MinLength(1) @MaxLength(LEAD_FIELDS.origem.max) @noControls('origem') origem?: string;

  @IsOptional() @IsString() @MinLength(1) @MaxLength(LEAD_FIELDS.email.max) @noControls('email') email?: string;

  @IsOptional() @IsIn(SCREENING_FILTERS, { message: SCREENING }) screening?: ScreeningFilter;

  @IsOptional() @IsIn(LEAD_CHANNELS, { message: CHANNEL }) channel?: LeadChannel;

  // The first rule from the top that fails names the code: not a string, a control character, empty, too long, no word.
  @IsOptional()
  @IsString({ message: Q })
  @noControls('q')
  @ValidateBy({ name: 'minLength', validator: { validate: (value) => typeof value === 'string' && value.length > 0 } }, { message: Q })
  @MaxCodePoints(MAX_QUERY_LENGTH, { message: Q })
  @searchable()
  q?: string;
}

/**
 * The filter a query names, on every surface: a plain date is a day in `timeZone`, `since` from its first instant and
 * `until` (exclusive) up to the next day's. `until` before `since` is a 400 invalid_query naming `until`.
 */
export function leadFilterOf(query: LeadFilterQuery, timeZone: string): LeadFilter {
  const since = query.since instanceof CalendarDay ? startOf(query.since, timeZone) : query.since;
  const until = query.until instanceof CalendarDay ? startOf(query.until.next(), timeZone) : query.until;
  const screening = query.screening ?? DEFAULT_SCREENING;
  const filter: LeadFilter = { since, until, origem: query.origem, email: query.email, channel: query.channel, q: query.q };
  if (screening !== 'all') filter.screening = screening as ScreeningVerdict;
  if (filter.since && filter.until && filter.since > filter.until) {
    throw invalidQuery([{ parameter: 'until', code: 'out_of_range', detail: 'until must not be before since (since is inclusive, until exclusive).' }]);
  }
  return filter;
}

/** A day's first instant in the zone, within the instants a filter may name. */
function startOf(day: CalendarDay, timeZone: string): Date {
  const instant = zoneClock(timeZone).startOfDay(day.year, day.month, day.day);
  return new Date(Math.min(Math.max(instant, INSTANT_RANGE.earliest), INSTANT_RANGE.latest));
}

/**
 * GET /api/v1/leads's query. The global ValidationPipe answers a broken rule, an unknown or a repeated parameter with
 * 400 invalid_query naming the parameter (src/body/validation.pipe.ts).
 */
export class LeadListQuery extends LeadFilterQuery {
  @PageLimit() limit?: number;

  @IsOptional() @IsString() cursor?: string;
}
