import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import swaggerUiDistPath from 'swagger-ui-dist/absolute-path.js';
import { GRAPHQL_EXPLORER_JS } from '../graphql/graphql-explorer.js';
import { DOCS_CSS, NAV_CSS, siteHeader } from './docs-layout.js';

/** Swagger UI from swagger-ui-dist, loading nothing from another host. The init script is a file, so CSP needs no inline script. */
export const SWAGGER_UI_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Leads API · explorer</title>
<link rel="icon" href="/favicon.ico" sizes="32x32">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/docs/assets/explorer.css">
</head>
<body>
${siteHeader('/docs')}
<main id="swagger-ui" aria-label="API explorer"></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-init.js"></script>
</body>
</html>
`;

/**
 * "Authorize" offers both schemes of the contract: a bearer token, and operatorAuth's client credentials flow, whose
 * token request Swagger UI sends to /oauth2/token on this origin (HTTP Basic). Authorizations are not persisted:
 * Swagger UI would keep the operator's client_secret in localStorage.
 */
const SWAGGER_INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/docs/openapi-leads.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: false,
    displayRequestDuration: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout'
  });
});
`;

/** The site's navigation on Swagger UI's page, and long words in its descriptions broken rather than widening a phone's page. */
const EXPLORER_CSS = `body{margin:0}
${NAV_CSS}.site-nav{max-width:1460px;padding:.6rem 20px}
.swagger-ui .markdown,.swagger-ui .renderedMarkdown{overflow-wrap:anywhere}
`;

export interface DocsAsset {
  type: string;
  content: Buffer;
}

const dist = (name: string) => readFileSync(join(swaggerUiDistPath(), name));

/** Read once at start (about 1.5 MB), then served from memory. */
export const DOCS_ASSETS: Record<string, DocsAsset> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', content: dist('swagger-ui.css') },
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', content: dist('swagger-ui-bundle.js') },
  'favicon-32x32.png': { type: 'image/png', content: dist('favicon-32x32.png') },
  'favicon-16x16.png': { type: 'image/png', content: dist('favicon-16x16.png') },
  'swagger-init.js': { type: 'text/javascript; charset=utf-8', content: Buffer.from(SWAGGER_INIT_JS) },
  'docs.css': { type: 'text/css; charset=utf-8', content: Buffer.from(DOCS_CSS) },
  'explorer.css': { type: 'text/css; charset=utf-8', content: Buffer.from(EXPLORER_CSS) },
  'graphql-explorer.js': { type: 'text/javascript; charset=utf-8', content: Buffer.from(GRAPHQL_EXPLORER_JS) },
};
