import { readFileSync } from 'node:fs';
import { packagePath } from '../config/package-root.js';
import { docsLayout, escapeHtml } from '../docs/docs-layout.js';

/** The schema is the GraphQL contract: one committed file, loaded by the server and served as it is. */
export const GRAPHQL_SCHEMA_FILE = packagePath('src/graphql/schema.graphql');
export const GRAPHQL_SCHEMA = readFileSync(GRAPHQL_SCHEMA_FILE, 'utf8');

/** Each example with the variables it declares, and only those (none: an empty variables box). */
const EXAMPLES: { name: string; query: string; variables?: Record<string, unknown> }[] = [
  { name: 'Health', query: '{\n  health {\n    status\n    version\n    checks { database redis }\n  }\n}' },
  {
    name: 'Site',
    query: '{\n  site {\n    brand\n    company\n    phone\n    trial { days credit_card_required url }\n    links { docs openapi agents }\n  }\n}',
  },
  { name: 'Search the docs', query: 'query Search($text: String) {\n  docs(search: $text) { slug title url }\n}', variables: { text: 'token' } },
  { name: 'One page', query: '{\n  doc(slug: "agents") { title markdown }\n}' },
];

const variablesText = (example: (typeof EXAMPLES)[number]) => (example.variables ? JSON.stringify(example.variables) : '');

/** What a browser gets at the GraphQL URL: a small explorer (same-origin script, no CDN), the examples and the schema. */
export const GRAPHQL_EXPLORER_HTML = docsLayout(
  'GraphQL explorer',
  `<h1>GraphQL explorer</h1>
<p>Send queries to <code>POST /api/v1/graphql</code> (read-only: health, site and docs; <code>leads</code> and <code>lead</code>
for an operator token with the scope <code>leads:read</code>). The schema is below and at
<a href="/docs/schema.graphql">/docs/schema.graphql</a>. A bearer token is optional; without one the anonymous rate limit applies.</p>
<form id="graphql-form">
<p><label for="examples">Example</label>
<select id="examples">${EXAMPLES.map(
    (example) => `<option value="${escapeHtml(example.query)}" data-variables="${escapeHtml(variablesText(example))}">${escapeHtml(example.name)}</option>`,
  ).join('')}</select></p>
<p><label for="query">Query</label><br><textarea id="query" name="query" rows="10" cols="70" spellcheck="false">${escapeHtml(EXAMPLES[0].query)}</textarea></p>
<p><label for="variables">Variables (JSON, optional)</label><br><textarea id="variables" name="variables" rows="3" cols="70" spellcheck="false">${escapeHtml(variablesText(EXAMPLES[0]))}</textarea></p>
<p><label for="token">Bearer token (optional)</label><br><input id="token" name="token" type="password" size="70" autocomplete="off"></p>
<p><button type="submit">Run</button></p>
</form>
<h2>Response</h2>
<pre id="result" aria-live="polite"></pre>
<h2>Schema</h2>
<pre><code>${escapeHtml(GRAPHQL_SCHEMA)}</code></pre>
<script src="/docs/assets/graphql-explorer.js"></script>`,
  '/api/v1/graphql',
);

export const GRAPHQL_EXPLORER_JS = `(function () {
  var form = document.getElementById('graphql-form');
  var examples = document.getElementById('examples');
  var query = document.getElementById('query');
  var result = document.getElementById('result');
  var variables = document.getElementById('variables');
  examples.addEventListener('change', function () {
    query.value = examples.value;
    variables.value = examples.selectedOptions[0].getAttribute('data-variables');
  });
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var values = null;
    var text = variables.value.trim();
    if (text) {
      try { values = JSON.parse(text); } catch (e) { result.textContent = 'Variables are not valid JSON.'; return; }
    }
    var headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
    var token = document.getElementById('token').value.trim();
    if (token) headers.Authorization = 'Bearer ' + token;
    result.textContent = 'Running…';
    fetch(window.location.pathname, { method: 'POST', headers: headers, body: JSON.stringify({ query: query.value, variables: values }) })
      .then(function (res) { return res.text().then(function (body) { return res.status + ' ' + res.statusText + '\\n' + body; }); })
      .then(function (out) {
        try { var nl = out.indexOf('\\n'); out = out.slice(0, nl + 1) + JSON.stringify(JSON.parse(out.slice(nl + 1)), null, 2); } catch (e) {}
        result.textContent = out;
      })
      .catch(function (error) { result.textContent = String(error); });
  });
})();
`;
