import { Body, Controller, Header, HttpCode, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Consumes } from '../body/body.guard.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { distinctHeader } from '../request/distinct-header.js';
import { OAUTH_PATH } from './oauth-error.format.js';
import { TokenResponse, TokenService } from './token.service.js';

@Controller(OAUTH_PATH)
@RateLimit('token')
@Consumes('application/x-www-form-urlencoded')
export class OAuthController {
  constructor(private readonly tokens: TokenService) {}

  @Post('token')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  token(@Body() params: Record<string, string>, @Req() req: Request): Promise<TokenResponse> {
    return this.tokens.exchange(params, distinctHeader(req, 'authorization'));
  }

  @Post('revoke')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  revoke(@Body() params: Record<string, string>): Promise<void> {
    return this.tokens.revoke(params);
  }
}
