const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export { escapeHtml };

/** The site's one navigation: every HTML page has it, Swagger UI's included. Paths on this origin. */
export const SITE_LINKS: readonly (readonly [href: string, label: string])[] = [
  ['/docs/quickstart', 'Quickstart'],
  ['/docs/agents', 'Agents'],
  ['/docs/operators', 'Operators'],
  ['/docs/webhooks', 'Webhooks'],
  ['/docs/notifications', 'Notifications'],
  ['/docs/privacy', 'Privacy'],
  ['/docs/errors', 'Errors'],
  ['/docs/api-versioning', 'Versioning'],
  ['/docs', 'API explorer'],
  ['/api/v1/graphql', 'GraphQL explorer'],
  ['/.well-known/mcp/server-card.json', 'MCP card'],
  ['/cli/', 'CLI'],
  ['/forms/example', 'Web form'],
  ['/docs/openapi-leads.json', 'OpenAPI'],
];

/** The `<header>` with the navigation; `current` (a path) is marked for assistive technology and styled. */
export function siteHeader(current?: string): string {
  const links = SITE_LINKS.map(([href, label]) => `<a href="${href}"${href === current ? ' aria-current="page"' : ''}>${label}</a>`).join('\n');
  return `<header class="site-header">
<nav class="site-nav" aria-label="Documentation">
<a class="site-home" href="/docs/quickstart">Leads API</a>
${links}
</nav>
</header>`;
}

/** The shell of every documentation page: semantic landmarks, readable on a narrow screen, no external assets. */
export function docsLayout(title: string, bodyHtml: string, path?: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Leads API</title>
<link rel="icon" href="/favicon.ico" sizes="32x32">
<link rel="stylesheet" href="/docs/assets/docs.css">
</head>
<body>
${siteHeader(path)}
<main>
${bodyHtml}
</main>
</body>
</html>
`;
}

/**
 * The navigation's styles alone, for Swagger UI's page too (which keeps its own look): colours fall back to the light
 * scheme where the docs' variables are not defined.
 */
export const NAV_CSS = `.site-header{border-bottom:1px solid var(--code,#f3f4f6);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.site-nav{display:flex;flex-wrap:wrap;align-items:baseline;gap:.2rem .9rem;max-width:64rem;margin:0 auto;padding:.6rem 1rem}
.site-nav a{color:var(--accent,#0b5fff);text-decoration:none;font-weight:600;white-space:nowrap}
.site-nav a:hover,.site-nav a:focus-visible{text-decoration:underline}
.site-nav a[aria-current=page]{color:var(--fg,#1b1f24);text-decoration:underline;text-decoration-thickness:2px;text-underline-offset:.3em}
.site-nav .site-home{color:var(--fg,#1b1f24);font-weight:700;margin-right:.4rem}
`;

export const DOCS_CSS = `:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#57606a;--accent:#0b5fff;--code:#f3f4f6}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#8b949e;--accent:#4c8dff;--code:#161b22}}
*{box-sizing:border-box}body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
${NAV_CSS}a{color:var(--accent)}
main{max-width:64rem;margin:0 auto;padding:1rem}h1{font-size:1.8rem;margin-top:.5rem}h2{margin-top:2rem}
p,li,h1,h2,h3{overflow-wrap:anywhere}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--code);border-radius:4px}code{padding:.1em .3em}
pre{padding:1rem;font-size:.8125rem;line-height:1.5;white-space:pre-wrap;overflow-wrap:anywhere;overflow-x:auto}pre code{padding:0}
table{border-collapse:collapse;width:100%;display:block;overflow-x:auto}
th,td{border:1px solid var(--code);padding:.4rem .6rem;text-align:left;vertical-align:top}td code{overflow-wrap:anywhere}.meta{color:var(--muted)}
textarea,input,select{max-width:100%;font:inherit}textarea{width:100%;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.875rem}
section{border-top:1px solid var(--code);padding-top:.5rem}section:target{outline:2px solid var(--accent);outline-offset:4px}
.stack label,.stack legend{display:block;margin:.8rem 0 .3rem;font-weight:600}.stack .choice{font-weight:400;margin:.4rem 0}
.stack input:not([type=radio]):not([type=hidden]){display:block;width:100%;max-width:24rem;padding:.5rem}fieldset{border:1px solid var(--code);border-radius:4px}
button{font:inherit;padding:.5rem 1.2rem;margin-top:1rem;cursor:pointer}.notice{border-left:4px solid var(--accent);padding:.4rem .8rem;background:var(--code)}
dt{font-weight:600}dd{margin:0 0 .5rem}
`;
