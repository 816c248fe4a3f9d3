import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { integer, LIMIT } from '../leads/lead-list-query.dto.js';
import { MAX_PAGE_SIZE } from '../leads/lead-reader.service.js';

/** GET /api/v1/notification-recipients: unknown, repeated or broken parameters are 400 invalid_query (the global pipe). */
export class RecipientListQuery {
  @IsOptional()
  @Transform(integer)
  @IsInt({ message: LIMIT })
  @Min(1, { message: LIMIT })
  @Max(MAX_PAGE_SIZE, { message: LIMIT })
  limit?: number;

  @IsOptional() @IsString() @MaxLength(200) cursor?: string;
}

/** GET /api/v1/notification-recipients/{id}/deliveries. */
export class RecipientDeliveriesQuery extends RecipientListQuery {
  @IsOptional() @IsString() @MaxLength(64) message_id?: string;
}
