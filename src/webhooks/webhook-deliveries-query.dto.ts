import { IsOptional, IsString, MaxLength } from 'class-validator';
import { PageLimit } from '../leads/lead-list-query.dto.js';

/** GET /api/v1/webhooks/{id}/deliveries: unknown, repeated or broken parameters are 400 invalid_query (the global pipe). */
export class DeliveriesQuery {
  @PageLimit() limit?: number;

  @IsOptional() @IsString() @MaxLength(80) cursor?: string;

  @IsOptional() @IsString() @MaxLength(64) message_id?: string;
}
