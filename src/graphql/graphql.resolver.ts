import { Args, Query, Resolver } from '@nestjs/graphql';
import { DocPage, DocsService } from '../docs/docs.service.js';
import { HealthReport, HealthService } from '../meta/health.service.js';
import { SiteInfo, SiteService } from '../site/site.service.js';

/** The schema's Query type, over the same services as REST: the answers are the same data. */
@Resolver('Query')
export class QueryResolver {
  constructor(
    private readonly healthService: HealthService,
    private readonly siteService: SiteService,
    private readonly docsService: DocsService,
  ) {}

  @Query()
  health(): Promise<HealthReport> {
    return this.healthService.report();
  }

  @Query()
  site(): SiteInfo {
    return this.siteService.getInfo();
  }

  @Query()
  docs(@Args('search') search?: string | null): DocPage[] {
    return this.docsService.search(search);
  }

  @Query()
  doc(@Args('slug') slug: string): DocPage | null {
    return this.docsService.find(slug) ?? null;
  }
}
