import { Controller, HttpCode, Post } from '@nestjs/common';
import { OptionalBearer } from '../auth/bearer.guard.js';
import { JsonBody } from '../body/json-body.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { SandboxResult, SandboxService } from './sandbox.service.js';

@Controller('api/v1')
@OptionalBearer()
@RateLimit('api')
export class SandboxController {
  constructor(private readonly sandbox: SandboxService) {}

  @Post('sandbox')
  @HttpCode(200)
  check(@JsonBody() body: Record<string, unknown>): SandboxResult {
    return this.sandbox.check(body);
  }
}
