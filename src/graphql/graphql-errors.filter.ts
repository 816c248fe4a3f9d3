import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import { GqlArgumentsHost } from '@nestjs/graphql';
import type { Request } from 'express';
import { GraphQLError } from 'graphql';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import { safeError } from '../logging/safe-error.js';
import { AppError } from '../problem/app-error.js';
import { requestIdOf } from '../request/request-id.js';

/**
 * What a resolver throws becomes an error of its field, never a problem document (the global ProblemFilter writes HTTP
 * answers, and a resolver has none): a GraphQLError as it is; a database that is down SERVICE_UNAVAILABLE; anything
 * else INTERNAL_SERVER_ERROR with a fixed message, logged, so no driver message reaches the client.
 */
@Catch()
export class GraphqlErrorsFilter implements ExceptionFilter {
  private readonly logger = new Logger('GraphQL');

  catch(exception: unknown, host: ArgumentsHost): GraphQLError {
    if (exception instanceof GraphQLError) return exception;
    if (isDatabaseUnavailable(exception)) {
      return new GraphQLError('The database is unavailable or did not answer in time; retry shortly.', { extensions: { code: 'SERVICE_UNAVAILABLE' } });
    }
    if (exception instanceof AppError) return new GraphQLError(exception.detail, { extensions: { code: exception.code.toUpperCase() } });
    const req = GqlArgumentsHost.create(host).getContext<{ req?: Request }>().req;
    this.logger.error({ requestId: req ? requestIdOf(req) : undefined, error: safeError(exception) }, 'unexpected error in a resolver');
    return new GraphQLError('An unexpected error occurred.', { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  }
}
