import { Controller, createParamDecorator, ExecutionContext, Header, HttpCode, Post } from '@nestjs/common';
import type { Request } from 'express';
import { clientIp } from '../http/client-ip.js';
import { JsonBody } from '../http/json-body.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { IdentityResponse, IdentityService } from './identity.service.js';

/** The client address as the rate limiter keys it: the registration's tokens share that address's agent ceiling. */
export const ClientAddress = createParamDecorator((_data: unknown, ctx: ExecutionContext) => clientIp(ctx.switchToHttp().getRequest<Request>()));

@Controller('api/v1/agent')
@RateLimit('registration')
export class IdentityController {
  constructor(private readonly identity: IdentityService) {}

  @Post('identity')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  register(@JsonBody() body: Record<string, unknown>, @ClientAddress() address: string): Promise<IdentityResponse> {
    return this.identity.register(body, address);
  }
}
