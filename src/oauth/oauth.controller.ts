import { Controller, Header, HttpCode, Post } from '@nestjs/common';
import { FormBody } from '../body/form-body.js';
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
  token(@FormBody() params: Record<string, string>): Promise<TokenResponse> {
    return this.tokens.exchange(params);
  }

  @Post('revoke')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  revoke(@FormBody() params: Record<string, string>): Promise<void> {
    return this.tokens.revoke(params);
  }
}
