import { IsOptional, IsString, MaxLength } from 'class-validator';
import { PageLimit } from '../leads/lead-list-query.dto.js';

/** GET /api/v1/notification-recipients: unknown, repeated or broken parameters are 400 invalid_query (the global pipe). */
export class RecipientListQuery {
  @PageLimit() limit?: number;

  @IsOptional() @IsString() @MaxLength(200) cursor?: string;
}

/** GET /api/v1/notification-recipients/{id}/deliveries. */
export class RecipientDeliveriesQuery extends RecipientListQuery {
  @IsOptional() @IsString() @MaxLength(64) message_id?: string;
}
