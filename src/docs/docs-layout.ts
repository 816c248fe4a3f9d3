const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export { escapeHtml };

/** The shell of every documentation page: semantic landmarks, readable on a narrow screen, no external assets. */
export function docsLayout(title: string, bodyHtml: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Leads API</title>
<link rel="stylesheet" href="/docs/assets/docs.css">
</head>
<body>
<header>
<nav aria-label="Documentation">
<a href="/docs">API explorer</a>
<a href="/docs/quickstart">Quickstart</a>
<a href="/docs/agents">Agents</a>
<a href="/docs/operators">Operators</a>
<a href="/docs/webhooks">Webhooks</a>
<a href="/docs/privacy">Privacy</a>
<a href="/docs/errors">Errors</a>
<a href="/docs/api-versioning">Versioning</a>
<a href="/docs/openapi-leads.json">OpenAPI</a>
</nav>
</header>
<main>
${bodyHtml}
</main>
</body>
</html>
`;
}

export const DOCS_CSS = `:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#57606a;--accent:#0b5fff;--code:#f3f4f6}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#8b949e;--accent:#4c8dff;--code:#161b22}}
*{box-sizing:border-box}body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{border-bottom:1px solid var(--code)}nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem;max-width:60rem;margin:0 auto;padding:.75rem 1rem}
a{color:var(--accent)}nav a{text-decoration:none;font-weight:600}nav a:hover,nav a:focus{text-decoration:underline}
main{max-width:60rem;margin:0 auto;padding:1rem}h1{font-size:1.8rem;margin-top:.5rem}h2{margin-top:2rem}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--code);border-radius:4px}code{padding:.1em .3em}
pre{padding:1rem;overflow-x:auto}pre code{padding:0}table{border-collapse:collapse;width:100%;display:block;overflow-x:auto}
th,td{border:1px solid var(--code);padding:.4rem .6rem;text-align:left;vertical-align:top}.meta{color:var(--muted)}
section{border-top:1px solid var(--code);padding-top:.5rem}section:target{outline:2px solid var(--accent);outline-offset:4px}
`;
