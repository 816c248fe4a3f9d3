import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { SITE_CONTENT } from './site.content.js';

export type SiteInfo = typeof SITE_CONTENT & { links: Record<string, string> };

@Injectable()
export class SiteService {
  private readonly info: SiteInfo;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const base = config.publicBaseUrl;
    // Built once: every link is absolute and derived from PUBLIC_BASE_URL, never from the request's Host.
    this.info = {
      ...SITE_CONTENT,
      links: {
        docs: `${base}/docs`,
        openapi: `${base}/docs/openapi-leads.json`,
        errors: `${base}/docs/errors`,
        versioning: `${base}/docs/api-versioning`,
        agents: `${base}/docs/agents`,
        graphql: `${base}/api/v1/graphql`,
        mcp: `${base}/mcp`,
        mcp_server_card: `${base}/.well-known/mcp/server-card.json`,
        cli: `${base}/cli/`,
      },
    };
  }

  getInfo(): SiteInfo {
    return this.info;
  }
}
