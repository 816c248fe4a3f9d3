import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageLimit } from '../leads/lead-list-query.dto.js';
import { QUEUE_STATUSES } from './data-subject-requests.store.js';

const STATUS = `status must be one or more of ${QUEUE_STATUSES.join(', ')}, separated by commas (the default: verified,completed).`;

/** GET /api/v1/data-subject-requests's query: which statuses, and a keyset page of them. */
export class DataSubjectQueueQuery {
  @IsOptional()
  @Matches(new RegExp(`^(${QUEUE_STATUSES.join('|')})(,(${QUEUE_STATUSES.join('|')}))*$`), { message: STATUS })
  @MaxLength(200, { message: STATUS })
  status?: string;

  @PageLimit() limit?: number;

  @IsOptional() @IsString() @MaxLength(100) cursor?: string;
}
