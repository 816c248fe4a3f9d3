import { createValidationPipe } from '../body/validation.pipe.js';
import { AppError, invalidQuery } from '../problem/app-error.js';
import { QueryError } from '../problem/error-catalog.js';
import { leadFilterOf, LeadListQuery } from './lead-list-query.dto.js';
import { InvalidCursor, LeadFilter, LeadPage, LeadReader } from './lead-reader.service.js';
import { DEFAULT_PAGE_SIZE } from './leads-read.service.js';

/** What a read of a page of leads asks for, checked. */
export interface LeadReadInput {
  filter: LeadFilter;
  limit: number;
  cursor?: string;
}

const pipe = createValidationPipe();

/**
 * The arguments of a list of leads from a surface other than the REST query (GraphQL's `leads`, MCP's `list_leads`),
 * named as GET /api/v1/leads names them and checked by its own rules (LeadListQuery), so every surface accepts and
 * refuses the same input with the same codes (a plain date a day in `timeZone`). Throws the AppError `invalid_query` with
 * one QueryError per parameter.
 */
export async function leadReadInput(args: Record<string, unknown>, timeZone: string): Promise<LeadReadInput> {
  const query = (await pipe.transform(args, { type: 'query', metatype: LeadListQuery })) as LeadListQuery;
  return { filter: leadFilterOf(query, timeZone), limit: query.limit ?? DEFAULT_PAGE_SIZE, cursor: query.cursor };
}

/** A page for checked input; a cursor that is not this filter's is the REST query's `invalid_query` on `cursor`. */
export async function readLeadPage(reader: LeadReader, input: LeadReadInput): Promise<LeadPage> {
  try {
    return await reader.list(input.filter, input.limit, input.cursor);
  } catch (error) {
    if (error instanceof InvalidCursor) throw invalidQuery([INVALID_CURSOR]);
    throw error;
  }
}

const INVALID_CURSOR: QueryError = {
  parameter: 'cursor',
  code: 'invalid_cursor',
  detail: 'The cursor was altered, or was given by a page with other filters; pass the cursor of a page with the same filters, or start again without one.',
};

/** The QueryErrors of an invalid_query AppError (none for any other error). */
export function queryErrorsOf(error: unknown): QueryError[] {
  return error instanceof AppError && error.code === 'invalid_query' ? ((error.options.errors ?? []) as QueryError[]) : [];
}
