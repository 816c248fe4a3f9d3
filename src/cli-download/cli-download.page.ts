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
./leads import leads.csv                         # or .jsonl; , or ; from the header; see below: reruns store nothing twice
./leads import leads.csv --dry-run               # checks the file, sends nothing
./leads --help                                   # every command takes --help and --json</code></pre>
<p id="reruns">A rerun of <code>leads import</code> within 24 hours, as the same caller, never stores a row twice: each row
carries an <code>Idempotency-Key</code> made from its content, which the service keeps for 24 hours per caller. The
same caller is the same operator login, the same agent registration, or (unregistered) the same address. The CLI keeps
one registration per installation: when its assertion expires it refreshes it (one process at a time, under a lock
beside the credentials file) and never registers anew while the registration can be renewed. After
<code>leads logout</code>, or if the registration could not be renewed (the CLI says so), the next import is a new
caller and stores the rows again.</p>
<h2>Operators</h2>
<p>With a client made by the service's operator (<code>npm run clients:create</code>), the CLI lists, exports and
imports the company's leads. The secret is never a flag: it comes from <code>LEADS_CLIENT_SECRET</code> or standard
input (typed without echo). The login keeps the access token, and the secret only with <code>--save-secret</code>.</p>
<pre><code>./leads login --client-id &lt;id&gt;                   # then type or pipe the secret
./leads list --limit 20                          # a table on a terminal; --json, --all, --since/--until/--origem/--email
./leads list --screening held                    # leads waiting for review (list says how many: "N leads awaiting review")
./leads release &lt;id&gt;                            # accept a held lead (leads:screen); or: ./leads spam &lt;id&gt;
./leads export --format csv --delimiter ';' --output leads.csv   # streamed; a progress line on the terminal
./leads export --format jsonl &gt; leads.jsonl
./leads import leads.csv                         # sent as the operator client (leads:write)
./leads logout                                   # forgets the login, revokes the registration</code></pre>
<h2>Webhooks</h2>
<p>Stored leads are sent to your endpoints as signed webhooks (Standard Webhooks), retried for more than a day. Managing
them needs a login whose client has <code>webhooks:manage</code>. The signing secret is shown once, when the endpoint
is made or its secret rotated; the CLI never stores it.</p>
<pre><code>./leads webhooks add https://example.com/hooks/leads --description "CRM"   # prints the secret, once
./leads webhooks list                            # id, status, url, events, disabled_reason
./leads webhooks test &lt;id&gt;                       # a signed webhook.test; waits for its first attempt (--wait 0: no)
./leads webhooks deliveries &lt;id&gt; --all           # every attempt, newest first; --message &lt;msg_id&gt;
./leads webhooks rotate &lt;id&gt;                     # a new secret; the previous one keeps signing for 24 h
./leads webhooks disable &lt;id&gt;                    # or enable; replay --since &lt;time&gt; sends a period again
./leads webhooks remove &lt;id&gt;</code></pre>
<h2>E-mail notifications</h2>
<p>The team can be told of each new lead by e-mail, or once a day with the previous day's leads. Managing the
recipients needs a login whose client has <code>notifications:manage</code>. Each address gets a confirmation e-mail
and nothing else until someone there presses its button (<a href="/docs/notifications">/docs/notifications</a>).</p>
<pre><code>./leads notify add vendas@example.com            # --mode immediate|daily_digest, --language pt-BR|en, --no-personal-data
./leads notify list                              # id, status (pending, confirmed, unsubscribed, bouncing), mode, email
./leads notify test &lt;id&gt;                         # a test e-mail to a confirmed recipient
./leads notify remove &lt;id&gt;</code></pre>
<p>Exit codes: 0 ok, 1 usage, 2 invalid input, 3 authentication, 4 rate limited (after retrying <code>Retry-After</code>),
5 server or network. <code>--base-url</code> or <code>LEADS_BASE_URL</code> points it at another service.
Credentials live in <code>$XDG_CONFIG_HOME/leads-cli/credentials.json</code> (default <code>~/.config/leads-cli</code>).</p>`;
  return docsLayout('Command-line client', body, '/cli/');
}
