import { Controller, Header, HttpCode, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import { parseFormBody } from '../http/form-body.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { TokenResponse, TokenService } from './token.service.js';

@Controller('oauth2')
@RateLimit('token')
export class OAuthController {
  constructor(private readonly tokens: TokenService) {}

  @Post('token')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  token(@Req() req: Request): Promise<TokenResponse> {
    return this.tokens.exchange(parseFormBody(req));
  }

  @Post('revoke')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  revoke(@Req() req: Request): Promise<void> {
    return this.tokens.revoke(parseFormBody(req));
  }
}
