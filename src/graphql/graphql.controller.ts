import { Body, Controller, Get, Header, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { OptionalBearer } from '../auth/bearer.guard.js';
import { Consumes } from '../body/body.guard.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { GRAPHQL_EXPLORER_HTML } from './graphql-explorer.js';
import { GraphqlService } from './graphql.service.js';

@Controller()
export class GraphqlController {
  constructor(private readonly graphql: GraphqlService) {}

  /** The same door as REST: JSON body, bearer guard, rate-limit tier, problems for transport errors. */
  @Post('api/v1/graphql')
  @HttpCode(200)
  @OptionalBearer()
  @RateLimit('api')
  // Any JSON value: a batch (array) gets GraphQL's own error, not a problem.
  @Consumes('application/json', { anyValue: true })
  execute(@Body() body: unknown, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<string> {
    return this.graphql.execute(body, req, res);
  }

  /** Queries are never run from GET (no CSRF through links or images); a browser gets the explorer. */
  @Get('api/v1/graphql')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=300')
  explorer(): string {
    return GRAPHQL_EXPLORER_HTML;
  }
}
