import { Controller, HttpCode, Post } from '@nestjs/common';
import { JsonBody } from '../http/json-body.js';
import { SandboxResult, SandboxService } from './sandbox.service.js';

@Controller('api/v1')
export class SandboxController {
  constructor(private readonly sandbox: SandboxService) {}

  @Post('sandbox')
  @HttpCode(200)
  check(@JsonBody() body: Record<string, unknown>): SandboxResult {
    return this.sandbox.check(body);
  }
}
