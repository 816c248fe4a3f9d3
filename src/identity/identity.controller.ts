import { Body, Controller, Header, HttpCode, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import { languageOf } from '../docs/person-page.js';
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
  register(
    @Body() body: Record<string, unknown>,
    @ClientAddress() address: string,
    @Req() req: Request,
  ): Promise<IdentityResponse | RefreshedIdentityResponse> {
    return this.identity.answer(body, address, languageOf(req));
  }

  /** The claim ceremony's start: a code e-mailed to the owner, the user code and the page for the agent to show. */
  @Post('identity/claim')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Consumes('application/json')
  claim(@Body() body: Record<string, unknown>, @ClientAddress() address: string, @Req() req: Request) {
    return this.identity.claim(body, address, languageOf(req));
  }
}
