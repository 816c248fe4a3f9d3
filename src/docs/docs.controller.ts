import { Controller, Get, Header, Headers, Param, Res, StreamableFile } from '@nestjs/common';
import type { Response } from 'express';
import { AppError } from '../problem/app-error.js';
import { CatalogListing, DocsService } from './docs.service.js';
import { OpenApiService } from './openapi.service.js';
import { GRAPHQL_SCHEMA } from '../graphql/graphql-explorer.js';
import { FAVICON_ICO } from './favicon.js';
import { DOCS_ASSETS, SWAGGER_UI_HTML } from './swagger-ui.js';

const PAGE_CACHE = 'public, max-age=300';

/** The agents guide where agents look for it (the auth.md convention), as Markdown. */
@Controller()
export class AuthMdController {
  constructor(private readonly docs: DocsService) {}

  @Get('auth.md')
  @Header('Content-Type', 'text/markdown; charset=utf-8')
  @Header('Cache-Control', PAGE_CACHE)
  @Header('Access-Control-Allow-Origin', '*')
  authMd(): string {
    return this.docs.get('agents').markdown;
  }
}

/** Browsers ask every origin for /favicon.ico; every page also links it. */
@Controller()
export class FaviconController {
  @Get('favicon.ico')
  @Header('Cache-Control', 'public, max-age=86400')
  favicon(): StreamableFile {
    return new StreamableFile(FAVICON_ICO, { type: 'image/x-icon', length: FAVICON_ICO.length });
  }
}

@Controller('docs')
export class DocsController {
  constructor(
    private readonly docs: DocsService,
    private readonly openapi: OpenApiService,
  ) {}

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', PAGE_CACHE)
  explorer(): string {
    return SWAGGER_UI_HTML;
  }

  /** The same bytes for every request: a string answer was encoded anew each time (130 KB of garbage per request). */
  @Get('openapi-leads.json')
  @Header('Cache-Control', PAGE_CACHE)
  @Header('Access-Control-Allow-Origin', '*')
  contract(): StreamableFile {
    return new StreamableFile(this.openapi.bytes, { type: 'application/json; charset=utf-8', length: this.openapi.bytes.length });
  }

  @Get('assets/:file')
  @Header('Cache-Control', 'public, max-age=86400')
  asset(@Param('file') file: string): StreamableFile {
    const asset = Object.hasOwn(DOCS_ASSETS, file) ? DOCS_ASSETS[file] : undefined;
    if (!asset) throw new AppError('not_found', `There is no documentation asset "${file}".`);
    return new StreamableFile(asset.content, { type: asset.type });
  }

  /** HTML for people, the same catalog as JSON for `Accept: application/json`. */
  @Get('errors')
  @Header('Cache-Control', PAGE_CACHE)
  @Header('Vary', 'Accept')
  errors(@Headers('accept') accept: string | undefined, @Res({ passthrough: true }) res: Response): CatalogListing | string {
    const wantsJson = res.req.accepts(['text/html', 'application/json']) === 'application/json' && accept !== undefined;
    res.type(wantsJson ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8');
    return wantsJson ? this.docs.errorCatalog() : this.docs.get('errors').html;
  }

  /** The GraphQL contract, as committed. Declared before :slug, which would otherwise take the path. */
  @Get('schema.graphql')
  @Header('Content-Type', 'text/plain; charset=utf-8')
  @Header('Cache-Control', PAGE_CACHE)
  @Header('Access-Control-Allow-Origin', '*')
  graphqlSchema(): string {
    return GRAPHQL_SCHEMA;
  }

  @Get(':slug')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', PAGE_CACHE)
  page(@Param('slug') slug: string): string {
    return this.docs.get(slug).html;
  }
}
