import { Controller, Get, Header } from '@nestjs/common';
import { OptionalBearer } from '../auth/bearer.guard.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { SiteInfo, SiteService } from '../site/site.service.js';
import { HealthReport, HealthService } from './health.service.js';

@Controller('api/v1')
export class MetaController {
  constructor(
    private readonly health: HealthService,
    private readonly site: SiteService,
  ) {}

  @Get('health')
  @Header('Cache-Control', 'no-store')
  check(): Promise<HealthReport> {
    return this.health.check();
  }

  @Get('info')
  @OptionalBearer()
  @RateLimit('api')
  // private: the answer carries this caller's RateLimit fields.
  @Header('Cache-Control', 'private, max-age=300')
  info(): SiteInfo {
    return this.site.getInfo();
  }
}
