import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';

/** GET /api/v1/privacy/requests/{id}/data's query: the next page's cursor, or every lead at once as CSV. */
export class PrivacyDataQuery {
  @IsOptional() @IsString() @MaxLength(2000) cursor?: string;

  @IsOptional() @IsIn(['json', 'csv'], { message: 'format must be json (pages, the default) or csv (every lead in one file).' }) format?: 'json' | 'csv';
}
