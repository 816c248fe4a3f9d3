import { Inject, Injectable } from '@nestjs/common';
import { marked } from 'marked';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AppError } from '../problem/app-error.js';
import { ERROR_CATALOG, ErrorCode, FIELD_ERROR_CODES, QUERY_ERROR_CODES } from '../problem/error-catalog.js';
import { errorTypeUri } from '../problem/problem.js';
import { DOC_PAGES } from './docs.pages.js';
import { docsLayout, escapeHtml } from './docs-layout.js';

export interface DocPage {
  slug: string;
  title: string;
  summary: string;
  url: string;
  markdown: string;
  html: string;
}

export interface CatalogListing {
  errors: { code: ErrorCode; status: number; title: string; hint: string; description: string; type: string }[];
}

/** Every documentation page, built once at start: /docs/*, GraphQL and MCP all read from here. */
@Injectable()
export class DocsService {
  private readonly pages: DocPage[];
  private readonly catalog: CatalogListing;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const base = config.publicBaseUrl;
    this.catalog = {
      errors: (Object.keys(ERROR_CATALOG) as ErrorCode[]).map((code) => ({ code, ...ERROR_CATALOG[code], type: errorTypeUri(base, code) })),
    };
    const sources = [...DOC_PAGES, this.errorsPageSource()];
    this.pages = sources.map((source) => {
      const markdown = source.markdown.replaceAll('{base_url}', base).trim();
      const html = docsLayout(source.title, marked.parse(markdown, { async: false }), `/docs/${source.slug}`);
      return { slug: source.slug, title: source.title, summary: source.summary, url: `${base}/docs/${source.slug}`, markdown, html };
    });
  }

  get(slug: string): DocPage {
    const page = this.find(slug);
    if (!page) throw new AppError('not_found', `There is no documentation page "${slug}".`);
    return page;
  }

  find(slug: string): DocPage | undefined {
    return this.pages.find((p) => p.slug === slug);
  }

  /** Pages whose title, summary or text contains the search text, case-insensitively; all pages without one. */
  search(text?: string | null): DocPage[] {
    const needle = text?.trim().toLocaleLowerCase();
    if (!needle) return this.pages;
    return this.pages.filter((p) => [p.title, p.summary, p.markdown].some((field) => field.toLocaleLowerCase().includes(needle)));
  }

  errorCatalog(): CatalogListing {
    return this.catalog;
  }

  /** One section per code with the code as its anchor, so every problem's `type` URI lands on its own entry. */
  private errorsPageSource() {
    const sections = this.catalog.errors
      .map(
        (e) => `<section id="${e.code}">
<h2><code>${e.code}</code> — ${escapeHtml(e.title)}</h2>
<p class="meta">HTTP ${e.status}</p>
<p>${escapeHtml(e.description)}</p>
<p><strong>What to do:</strong> ${escapeHtml(e.hint)}</p>
</section>`,
      )
      .join('\n');
    const markdown = `# Error catalog

Every error response is an [RFC 9457](https://www.rfc-editor.org/rfc/rfc9457) problem (\`application/problem+json\`)
with \`type\`, \`title\`, \`status\`, \`detail\`, \`code\`, \`hint\`, \`instance\` and \`request_id\`. Validation problems add
\`errors[]\`: up to 20 entries of \`{pointer, code, detail}\`, where \`pointer\` is a JSON Pointer to the field and \`code\` one of
${FIELD_ERROR_CODES.map((code) => `\`${code}\``).join(', ')}. A bad query (\`invalid_query\`) lists its parameters as
\`{parameter, code, detail}\`, \`code\` one of ${QUERY_ERROR_CODES.map((code) => `\`${code}\``).join(', ')}. At \`/oauth2/*\` errors also carry the OAuth
members \`error\` and \`error_description\`. This list is available as JSON with \`Accept: application/json\`.

${sections}
`;
    return { slug: 'errors', title: 'Error catalog', summary: 'Every error code, its HTTP status, meaning and what to do.', markdown };
  }
}
