import { UseFilters } from '@nestjs/common';
import { Args, Context, Query, Resolver } from '@nestjs/graphql';
import type { Request } from 'express';
import { DocPage, DocsService } from '../docs/docs.service.js';
import type { LeadView } from '../leads/lead-reader.service.js';
import { ChannelBacklog, HealthReport, HealthService } from '../meta/health.service.js';
import { SiteInfo, SiteService } from '../site/site.service.js';
import { GraphqlErrorsFilter } from './graphql-errors.filter.js';
import { GraphqlLeadsService, LeadConnection, LeadsArgs } from './graphql-leads.service.js';

/** The schema's Query type, over the same services as REST: the answers are the same data. */
@Resolver('Query')
@UseFilters(GraphqlErrorsFilter)
export class QueryResolver {
  constructor(
    private readonly healthService: HealthService,
    private readonly siteService: SiteService,
    private readonly docsService: DocsService,
    private readonly leadsService: GraphqlLeadsService,
  ) {}

  /** REST's report, with the per-channel backlog as a list (GraphQL has no map). */
  @Query()
  async health(): Promise<Omit<HealthReport, 'outbox'> & { outbox: ({ channel: string } & ChannelBacklog)[] | null }> {
    const report = await this.healthService.report();
    return { ...report, outbox: report.outbox && Object.entries(report.outbox).map(([channel, backlog]) => ({ channel, ...backlog })) };
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

  /** Operators only (leads:read); `req` is the request the bearer guard read the principal from. */
  @Query()
  leads(@Args() args: LeadsArgs, @Context('req') req: Request): Promise<LeadConnection> {
    return this.leadsService.connection(args, req);
  }

  @Query()
  lead(@Args('id') id: string, @Context('req') req: Request): Promise<LeadView | null> {
    return this.leadsService.lead(id, req);
  }
}
