import { Transform } from 'class-transformer';
import { IsDate, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { invalidQuery } from '../problem/app-error.js';
import { LEAD_FIELDS } from './lead-rules.js';
import { LeadFilter, MAX_PAGE_SIZE } from './lead-reader.service.js';
import { parseDateTime } from './rfc3339.js';

/** Digits become a number for the range rules; anything else stays as sent, for IsInt to refuse. */
export const integer = ({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value);
/** An RFC 3339 date-time becomes its instant; anything else stays as sent, for IsDate to refuse. */
const dateTime = ({ value }: { value: unknown }) => (typeof value === 'string' ? (parseDateTime(value) ?? value) : value);

/** Stored values never hold control characters (lead-rules refuses them), and PostgreSQL errs on a NUL in a text parameter. */
const NO_CONTROLS = /^\P{Cc}*$/u;
const noControls = (name: string) => Matches(NO_CONTROLS, { message: `${name} must not contain control characters.` });

export const LIMIT = `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`;
const DATE_TIME = (name: string) => `${name} must be an RFC 3339 date-time with a time zone, such as 2026-11-22T13:45:14Z or 2026-11-22T10:45:14-03:00.`;

/** The filters of GET /api/v1/leads and GET /api/v1/leads/export: one set of rules for both. */
export class LeadFilterQuery {
  @IsOptional() @Transform(dateTime) @IsDate({ message: DATE_TIME('since') }) since?: Date;

  @IsOptional() @Transform(dateTime) @IsDate({ message: DATE_TIME('until') }) until?: Date;

  // No longer than a stored value can be: a longer one would only ever match nothing.
  @IsOptional() @IsString() @MinLength(1) @MaxLength(LEAD_FIELDS.origem.max) @noControls('origem') origem?: string;

  @IsOptional() @IsString() @MinLength(1) @MaxLength(LEAD_FIELDS.email.max) @noControls('email') email?: string;
}

/** The filter a query names; `until` before `since` is a 400 invalid_query naming `until`. */
export function leadFilterOf(query: LeadFilterQuery): LeadFilter {
  const filter: LeadFilter = { since: query.since, until: query.until, origem: query.origem, email: query.email };
  if (filter.since && filter.until && filter.since > filter.until) {
    throw invalidQuery([{ parameter: 'until', code: 'out_of_range', detail: 'until must not be before since (since is inclusive, until exclusive).' }]);
  }
  return filter;
}

/**
 * GET /api/v1/leads's query. The global ValidationPipe answers a broken rule, an unknown or a repeated parameter with
 * 400 invalid_query naming the parameter (src/body/validation.pipe.ts).
 */
export class LeadListQuery extends LeadFilterQuery {
  @IsOptional()
  @Transform(integer)
  @IsInt({ message: LIMIT })
  @Min(1, { message: LIMIT })
  @Max(MAX_PAGE_SIZE, { message: LIMIT })
  limit?: number;

  @IsOptional() @IsString() cursor?: string;
}
