import { docsLayout, escapeHtml } from '../docs/docs-layout.js';

/** GET /cli/: the curl line, the version and the SHA-256 of the file /cli/leads serves, and how to use it. */
export function installPage(base: string, version: string, sha256: string): string {
  const install = `curl -fsSL ${base}/cli/leads -o leads && chmod +x leads`;
  const body = `<h1>Command-line client</h1>
<p>One executable file for Node.js 18 or newer: no install step, no dependencies. It talks to <code>${escapeHtml(base)}</code>.</p>
<h2>Install</h2>
<pre><code id="install">${escapeHtml(install)}</code></pre>
<table>
<tr><th>version</th><td id="version">${escapeHtml(version)}</td></tr>
<tr><th>SHA-256 of <a href="/cli/leads">/cli/leads</a></th><td><code id="sha256">${sha256}</code></td></tr>
</table>
<p class="meta">Check it: <code>sha256sum leads</code> (or <code>shasum -a 256 leads</code>) prints the same digest.</p>
<h2>Usage</h2>
<pre><code>./leads health
./leads info
./leads sandbox --nome "Maria Silva" --email maria@example.com
./leads submit --nome "Maria Silva" --email maria@example.com --empresa "Acme" --mensagem "Orçamento"
echo '{"nome":"Maria Silva","email":"maria@example.com"}' | ./leads submit
./leads register --name "My integration"        # or --email you@example.com; stores credentials (mode 0600)
./leads token                                    # a current access token
./leads graphql '{ health { status } }'
./leads import leads.csv                         # or .jsonl; a rerun never stores a row twice
./leads logout                                   # revokes the registration, deletes the credentials
./leads --help                                   # every command takes --help and --json</code></pre>
<p>Exit codes: 0 ok, 1 usage, 2 invalid input, 3 authentication, 4 rate limited (after retrying <code>Retry-After</code>),
5 server or network. <code>--base-url</code> or <code>LEADS_BASE_URL</code> points it at another service.
Credentials live in <code>$XDG_CONFIG_HOME/leads-cli/credentials.json</code> (default <code>~/.config/leads-cli</code>).</p>`;
  return docsLayout('Command-line client', body);
}
