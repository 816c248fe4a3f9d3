import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ClientAddress } from '../auth/caller.decorator.js';
import { Consumes } from '../body/body.guard.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { IdentityResponse, IdentityService, RefreshedIdentityResponse } from './identity.service.js';

@Controller('api/v1/agent')
@RateLimit('registration')
export class IdentityController {
  constructor(private readonly identity: IdentityService) {}

  @Post('identity')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Consumes('application/json')
  register(@Body() body: Record<string, unknown>, @ClientAddress() address: string): Promise<IdentityResponse | RefreshedIdentityResponse> {
    return this.identity.answer(body, address);
  }
}
