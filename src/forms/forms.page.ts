import { docsLayout, escapeHtml } from '../docs/docs-layout.js';
import { LEAD_FIELD_NAMES } from '../leads/lead-rules.js';

/** The two things a site owner pastes: the script tag and the form markup. */
export function pasteSnippet(base: string): { script: string; form: string } {
  return {
    script: `<script src="${base}/forms/leads.js" defer></script>`,
    form: `<form data-leads data-origem="site" data-success="Thank you! We will be in touch soon.">
  <label for="nome">Name</label>
  <input id="nome" name="nome" autocomplete="name" required>
  <label for="email">E-mail</label>
  <input id="email" name="email" type="email" autocomplete="email" required>
  <label for="telefone">Phone</label>
  <input id="telefone" name="telefone" type="tel" autocomplete="tel">
  <label for="empresa">Company</label>
  <input id="empresa" name="empresa" autocomplete="organization">
  <label for="mensagem">Message</label>
  <textarea id="mensagem" name="mensagem" rows="4"></textarea>
  <button type="submit">Send</button>
</form>`,
  };
}

/** Styles for the live example only (inline styles are allowed by the CSP; scripts are not). */
const EXAMPLE_CSS = `<style>
form[data-leads]{display:grid;gap:.35rem;max-width:32rem}
form[data-leads] input,form[data-leads] textarea{font:inherit;width:100%;max-width:100%;padding:.5rem;border:1px solid #8b949e;border-radius:4px}
form[data-leads] label{font-weight:600;margin-top:.5rem}
form[data-leads] button{font:inherit;justify-self:start;margin-top:.75rem;padding:.55rem 1.2rem;border:0;border-radius:4px;background:var(--accent);color:#fff;cursor:pointer}
form[data-leads] button:disabled{opacity:.6;cursor:progress}
form[data-leads] [aria-invalid=true]{border-color:#d1242f;outline:1px solid #d1242f}
.leads-error{color:#d1242f;font-size:.95rem}
.leads-status{margin:.75rem 0 0;font-weight:600}.leads-status[data-state=error]{color:#d1242f}
pre{white-space:pre-wrap;overflow-wrap:anywhere}
</style>`;

/** GET /forms/example: the copy-paste instructions and a working form using the script from this origin. */
export function examplePage(base: string): string {
  const snippet = pasteSnippet(base);
  const body = `${EXAMPLE_CSS}
<h1>Lead form for your site</h1>
<p>Paste these two pieces into any page. The script finds every <code>&lt;form data-leads&gt;</code>, sends it as JSON
to <code>${escapeHtml(base)}/api/v1/lead</code>, shows errors beside the fields, and never sends a form twice.</p>
<h2>1. The script (once per page)</h2>
<pre><code id="snippet-script">${escapeHtml(snippet.script)}</code></pre>
<h2>2. The form</h2>
<pre><code id="snippet-form">${escapeHtml(snippet.form)}</code></pre>
<p class="meta">Fields are read by <code>name</code>: ${LEAD_FIELD_NAMES.map((name) => `<code>${name}</code>`).join(', ')}. Optional attributes: <code>data-origem</code> (where
the lead came from, unless the form has an <code>origem</code> field), <code>data-success</code> (the thank-you text),
<code>data-leads-api</code> (another API origin). No cookies, no storage.</p>
<h2>Try it</h2>
<p>This copy of the form carries <code>data-leads-sandbox</code>: it is validated by <code>/api/v1/sandbox</code>, which
stores nothing, and shows the lead as it would be stored. The form you paste has no such attribute and sends real leads.</p>
<section aria-labelledby="try-heading">
<h3 id="try-heading">Contact us</h3>
${snippet.form.replace('data-origem="site" data-success="Thank you! We will be in touch soon."', 'data-origem="forms-example" data-leads-sandbox data-success="Valid. Nothing was stored; this is the lead as the service would store it:"')}
</section>
<script src="/forms/leads.js" defer></script>`;
  return docsLayout('Lead form for your site', body);
}
