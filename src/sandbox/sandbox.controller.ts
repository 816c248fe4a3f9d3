import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { OptionalBearer } from '../auth/bearer.guard.js';
import { Consumes } from '../body/body.guard.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { SandboxResult, SandboxService } from './sandbox.service.js';

@Controller('api/v1')
@OptionalBearer()
@RateLimit('api')
export class SandboxController {
  constructor(private readonly sandbox: SandboxService) {}

  @Post('sandbox')
  @HttpCode(200)
  @Consumes('application/json')
  check(@Body() body: Record<string, unknown>): SandboxResult {
    return this.sandbox.check(body);
  }
}
