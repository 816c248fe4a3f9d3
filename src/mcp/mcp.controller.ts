import { Controller, Get, Header, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { OptionalBearer } from '../auth/bearer.guard.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { mcpRouteLimit } from './mcp-message.js';
import { McpService } from './mcp.service.js';

@Controller()
export class McpController {
  constructor(private readonly mcp: McpService) {}

  /**
   * Same auth as REST; a message that does work spends the caller's REST budget, housekeeping its own allowance.
   * GET and DELETE have no route: the router answers 405 (stateless, no streams).
   */
  @Post('mcp')
  @OptionalBearer()
  @RateLimit(mcpRouteLimit)
  handle(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.mcp.handle(req, res);
  }

  @Get(['.well-known/mcp/server-card.json', 'mcp/server-card'])
  @Header('Cache-Control', 'public, max-age=3600')
  @Header('Access-Control-Allow-Origin', '*')
  serverCard(@Req() req: Request, @Res({ passthrough: true }) res: Response): string | undefined {
    return this.mcp.serverCard(req, res);
  }
}
