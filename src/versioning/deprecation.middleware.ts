import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';

interface Rule {
  prefix: string;
  headers: [string, string][];
}

/**
 * API_DEPRECATIONS as response headers on every matching response, errors included: Deprecation (RFC 9745, an SF
 * date), Sunset (RFC 8594, IMF-fixdate) and Link to the policy. The longest matching prefix wins.
 */
@Injectable()
export class DeprecationMiddleware implements NestMiddleware {
  private readonly rules: Rule[];

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const policy = `${config.publicBaseUrl}/docs/api-versioning`;
    this.rules = config.apiDeprecations
      .map((entry) => {
        // The policy page is always the deprecation link; a configured link (a migration guide) is added beside it.
        const links = [`<${policy}>; rel="deprecation"; type="text/html"`];
        if (entry.link) links.push(`<${entry.link}>; rel="deprecation"`);
        const target = entry.link ?? policy;
        const headers: [string, string][] = [['Deprecation', `@${Math.floor(entry.deprecation.getTime() / 1000)}`]];
        if (entry.sunset) {
          headers.push(['Sunset', entry.sunset.toUTCString()]);
          links.push(`<${target}>; rel="sunset"; type="text/html"`);
        }
        headers.push(['Link', links.join(', ')]);
        return { prefix: entry.path.replace(/(?<!\/)\/+$/, ''), headers };
      })
      .sort((a, b) => b.prefix.length - a.prefix.length);
  }

  use(req: Request, res: Response, next: NextFunction): void {
    const path = req.originalUrl.split('?')[0];
    const rule = this.rules.find((r) => path === r.prefix || path.startsWith(`${r.prefix}/`) || r.prefix === '');
    for (const [name, value] of rule?.headers ?? []) res.setHeader(name, value);
    next();
  }
}
