import { KEY_LIFETIME_MS } from '../leads/idempotency.service.js';
import { TOKEN_LIFETIMES } from '../oauth/key-store.service.js';
import { BODY_LIMIT_BYTES, inKiB } from '../server/http-limits.js';

/** Hand-written documentation pages (Markdown). The errors catalog page is generated from the catalog instead. */
export interface DocPageSource {
  slug: string;
  title: string;
  summary: string;
  /** Markdown; `{base_url}` is replaced by PUBLIC_BASE_URL when the page is built. */
  markdown: string;
}

/** A token lifetime as the pages write it: 900 → "15 minutes", 3600 → "1 hour". */
function lifetime(seconds: number): string {
  const [count, unit] = seconds % 3600 === 0 ? [seconds / 3600, 'hour'] : [seconds / 60, 'minute'];
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

export const DOC_PAGES: DocPageSource[] = [
  {
    slug: 'agents',
    title: 'Agents: registration, tokens and calls',
    summary: 'How a software agent discovers the service, registers, exchanges its assertion for a token, calls the API, renews and revokes.',
    markdown: `
# Agents: registration, tokens and calls

A token is optional: every lead endpoint also works without one. A registered agent that sends its bearer token gets
a higher rate limit, and its leads record which registration sent them. Everything below needs only the base URL,
\`{base_url}\`. The same text is served as Markdown at [/auth.md]({base_url}/auth.md).

The shell blocks on this page run in order in one bash session and need \`curl\` and [\`jq\`](https://jqlang.org/),
which takes values out of the JSON answers. \`BASE\` is the service; set it first to point them at another.

## 1. Discover

\`\`\`sh
BASE=\${BASE:-{base_url}}
curl -s $BASE/.well-known/oauth-protected-resource     # RFC 9728: which authorization server, which scopes
curl -s $BASE/.well-known/oauth-authorization-server   # RFC 8414: token, revocation and JWKS endpoints, agent_auth
\`\`\`

\`agent_auth.identity_endpoint\` in [/.well-known/oauth-authorization-server]({base_url}/.well-known/oauth-authorization-server)
is where agents register. \`/.well-known/openid-configuration\` serves the same
document for OpenID clients; the service has no authorization endpoint and issues no ID tokens, so the document
names none (strict OpenID Connect validators expect \`authorization_endpoint\` and will not find it).

## 2. Register

Anonymous, recommended for lead-capture agents:

\`\`\`sh
curl -s $BASE/api/v1/agent/identity -o registration.json -H 'Content-Type: application/json' \\
  -d '{"type": "anonymous", "client_name": "my-agent", "contacts": ["ops@example.com"]}'
ASSERTION=$(jq -r .identity_assertion registration.json)
\`\`\`

Or with a contact e-mail (recorded as \`email\` with \`email_verified: false\` until a future claim ceremony verifies it):

\`\`\`sh
curl -s $BASE/api/v1/agent/identity -o registration.json -H 'Content-Type: application/json' \\
  -d '{"type": "identity_assertion", "assertion_type": "verified_email", "assertion": "ana@example.com"}'
ASSERTION=$(jq -r .identity_assertion registration.json)
\`\`\`

The answer (\`200\`, \`Cache-Control: no-store\`) holds \`registration_id\`, \`identity_assertion\` (a JWT signed by the
service, valid for ${lifetime(TOKEN_LIFETIMES.assertion)} and reusable until then), \`assertion_expires\`, \`scopes\`, and a \`claim_token\` shown
only this once. \`client_name\` and \`contacts\` are self-reported: stored, never trusted and never e-mailed.

## 3. Exchange the assertion for an access token

\`\`\`sh
ACCESS_TOKEN=$(curl -s $BASE/oauth2/token \\
  -d grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer \\
  --data-urlencode "assertion=$ASSERTION" | jq -r .access_token)
\`\`\`

The body is form-encoded (RFC 7523). The answer is \`{"access_token", "token_type": "Bearer", "expires_in": ${TOKEN_LIFETIMES.access_token},
"scope": "leads:write"}\`: a JWT access token (RFC 9068) valid for ${lifetime(TOKEN_LIFETIMES.access_token)}. There is no refresh token. Errors follow
RFC 6749 (\`error\`, \`error_description\`) and also carry the problem members (\`code\`, \`detail\`, \`hint\`); any
problem with the assertion is \`invalid_grant\`.

## 4. Call the API

\`\`\`sh
curl -s $BASE/api/v1/lead -H "Authorization: Bearer $ACCESS_TOKEN" \\
  -H 'Content-Type: application/json' -d '{"nome": "Ana", "email": "ana@example.com"}'
\`\`\`

The answer is \`201\` with the stored lead's \`id\`. Send the token only in the \`Authorization\` header. A token that is
present but malformed, expired or revoked is refused with \`401 invalid_token\` and
\`WWW-Authenticate: Bearer error="invalid_token", resource_metadata=…\`; it is never silently treated as anonymous. To call
anonymously, send no \`Authorization\` header at all.

## 5. Renew

When the access token expires, exchange the same identity assertion again (step 3). When the assertion itself has
expired (\`assertion_expires\`), refresh it (step 7): the same registration goes on. Register again (step 2) only
when a refresh is refused.

## 6. Revoke

\`\`\`sh
# This access token, on every instance at once:
curl -s $BASE/oauth2/revoke --data-urlencode "token=$ACCESS_TOKEN"
# The whole registration: its assertion and all its tokens:
curl -s $BASE/oauth2/revoke --data-urlencode "token=$ASSERTION"
\`\`\`

Revocation (RFC 7009) answers \`200\` for known and unknown tokens alike.

## 7. Keep the identity: refresh

Every registration answer, anonymous included, also carries a \`refresh_token\` (shown only this once; the service
keeps its SHA-256) and \`refresh_token_expires\` (30 days later by default). Send it back when the assertion has
expired, instead of registering again. This block registers, refreshes, and revokes what it made:

\`\`\`sh
REGISTRATION=$(curl -s {base_url}/api/v1/agent/identity -H 'Content-Type: application/json' -d '{"type": "anonymous"}')
REFRESH_TOKEN=$(printf '%s' "$REGISTRATION" | jq -r .refresh_token)
REFRESHED=$(curl -s {base_url}/api/v1/agent/identity -H 'Content-Type: application/json' \\
  -d "{\\"type\\": \\"refresh\\", \\"refresh_token\\": \\"$REFRESH_TOKEN\\"}")
printf '%s' "$REFRESHED" | jq '{registration_id, assertion_expires, refresh_token_expires}'   # the same registration_id
ASSERTION=$(printf '%s' "$REFRESHED" | jq -r .identity_assertion)   # exchange it as in step 3
REFRESH_TOKEN=$(printf '%s' "$REFRESHED" | jq -r .refresh_token)    # the next one; the one sent is spent
curl -s {base_url}/oauth2/revoke -d token_type_hint=refresh_token --data-urlencode "token=$REFRESH_TOKEN"   # ends the registration
\`\`\`

- The answer has the same \`registration_id\`, a new \`identity_assertion\` with its \`assertion_expires\`, and the
  next \`refresh_token\` with its \`refresh_token_expires\` (no claim token). Leads, \`Idempotency-Key\` replays and
  rate limits stay with the registration, so a retried import stores nothing twice across assertion expiry.
- Each refresh token works once: store the new one in place of the old, and refresh one at a time. The same spent
  token sent again within 30 seconds of its use gets the same new refresh token (so two processes that refreshed at
  once both go on). After that it is taken as stolen (RFC 9700 §4.14.2): the registration is revoked with all its
  refresh tokens, assertions and access tokens, and the answer is \`400 invalid_refresh_token\`.
- \`invalid_refresh_token\` also answers an unknown or expired refresh token, or one of a revoked registration: register
  again, as a new identity.
- Revoking a refresh token (\`token_type_hint=refresh_token\`, RFC 7009) revokes its registration, as an assertion does.
- The auth.md reference gives refresh tokens only to claimed registrations. Here anonymous ones get them too, so
  that an agent keeps its identity (and its idempotency scope) without a claim. It buys no extra capacity: a refreshed
  identity stays live, so it keeps counting toward the ceiling that all live identities registered from one address
  share, whatever address it refreshes from; refreshes also spend the registration quota of the address they come from.

## Keys

Tokens are signed with keys published at [/.well-known/jwks.json]({base_url}/.well-known/jwks.json): ES256 for
identity assertions, RS256 for access tokens. Keys rotate without notice; a retired key stays published until every
token it signed has expired.
`,
  },
  {
    slug: 'operators',
    title: 'Operators: read, export and import leads',
    summary: 'Create an OAuth client, get a token with client credentials, then list, export and import leads.',
    markdown: `
# Operators: read, export and import leads

The company's own people and systems (the marketing team, the CRM) read leads out with an **operator client**: an
OAuth 2.0 confidential client (client credentials, RFC 6749 §4.4) created on the server by whoever runs it. Its access
tokens carry the scopes the client was created with:

| scope | lets the client |
|---|---|
| \`leads:read\` | list leads and read one (REST, GraphQL \`leads\`/\`lead\`, MCP \`list_leads\`/\`get_lead\`) |
| \`leads:export\` | export leads as CSV or JSON Lines |
| \`leads:write\` | send leads, at the operator rate-limit tier (the CLI's \`leads import\` while logged in) |
| \`webhooks:manage\` | manage webhook endpoints, which receive every new lead ([webhooks]({base_url}/docs/webhooks)) |
| \`leads:erase\` | data-subject requests: erasure and revocation of consent ([privacy]({base_url}/docs/privacy)) |

The shell blocks below run in order in one bash session and need \`curl\`, Node.js (for the CLI) and
[\`jq\`](https://jqlang.org/), which takes values out of the JSON answers. \`BASE\` is the service and \`SERVICE_DIR\` its
folder on the machine it runs on (where \`npm start\` runs it); set them first to point the blocks elsewhere.

## 1. Create a client (on the server)

\`\`\`sh
BASE=\${BASE:-{base_url}}
SERVICE_DIR=\${SERVICE_DIR:-.}
npm --prefix "$SERVICE_DIR" run --silent clients:create -- \\
  --name "CRM" --scope "leads:read leads:export leads:write" | tail -n 1 > client.json
CLIENT_ID=$(jq -r .client_id client.json)
CLIENT_SECRET=$(jq -r .client_secret client.json)
\`\`\`

The last line of the output is \`{"client_id", "client_secret", "scope"}\`. The secret is shown this once and stored
only as a hash: keep it in a secret store. \`npm run clients:list\` prints one JSON line per client (never a secret).
\`npm run clients:rotate -- <client_id>\` prints a new secret the same way; the old one keeps working for
\`CLIENT_SECRET_GRACE\` (24 hours by default) so that running systems can switch, and \`CLIENT_SECRET_GRACE=0\` ends it
at once after a leak. \`npm run clients:revoke -- <client_id>\` stops the client and every token it holds, on every
instance at once.

## 2. Get an access token

\`\`\`sh
ACCESS_TOKEN=$(curl -s $BASE/oauth2/token -u "$CLIENT_ID:$CLIENT_SECRET" \\
  -d grant_type=client_credentials -d scope="leads:read leads:export" | jq -r .access_token)
\`\`\`

\`-u\` is \`client_secret_basic\`; sending \`client_id\` and \`client_secret\` as form fields (\`client_secret_post\`) works
too. \`scope\` is optional and must be a subset of the client's. The token is an RFC 9068 JWT valid for
${lifetime(TOKEN_LIFETIMES.access_token)}: ask for a new one when it expires. Wrong credentials are \`401 invalid_client\`.
Any OAuth library's client-credentials grant works unmodified; the token endpoint is in
[/.well-known/oauth-authorization-server]({base_url}/.well-known/oauth-authorization-server).

## 3. List leads

\`\`\`sh
curl -s "$BASE/api/v1/leads?limit=50" -H "Authorization: Bearer $ACCESS_TOKEN" | jq .
\`\`\`

\`{"data": [lead, …], "next_cursor": "…" | null}\`, newest first. Pass \`cursor=<next_cursor>\` for the next page (the
\`Link: <…>; rel="next"\` header holds that URL). Filters: \`since\` and \`until\` (RFC 3339 with a time zone, on
\`received_at\`), \`origem\` (exact) and \`email\` (exact, case-insensitive). \`GET /api/v1/leads/{id}\` reads one lead.
A lead as read has \`channel\` (\`api\`, \`form\`, \`mcp\` or \`cli\`: a label of the surface it came through) and
\`registration_id\` or \`client_id\` when an agent or an operator sent it. A bad query parameter is a \`400 invalid_query\`
whose \`errors[]\` name it.

## 4. Export

\`\`\`sh
curl -s -OJ "$BASE/api/v1/leads/export?format=csv&delimiter=%3B" -H "Authorization: Bearer $ACCESS_TOKEN"
\`\`\`

CSV (RFC 4180, UTF-8, a header row) or \`format=jsonl\` (JSON Lines), with the list's filters, streamed however many
leads there are; the file name carries the date. \`delimiter=;\` is the profile for spreadsheets in Brazilian locales
(semicolons and a UTF-8 byte order mark); it goes with CSV only. Cells that a spreadsheet would read as a formula are
prefixed with \`'\`; plain numbers such as \`+5511987654321\` are left alone. A few exports run at once on each
instance; one more is \`503 export_busy\` with \`Retry-After\`.

## 5. The CLI

\`\`\`sh
curl -fsSL $BASE/cli/leads -o leads && chmod +x leads
LEADS_CLIENT_SECRET="$CLIENT_SECRET" ./leads login --client-id "$CLIENT_ID"
./leads list
./leads export --format csv --output leads.csv
printf 'nome,email,empresa,origem\\nJoão Souza,joao.souza@example.com,Souza & Filhos,feira\\n' > new-leads.csv
./leads import new-leads.csv
\`\`\`

\`leads login\` reads the secret from \`LEADS_CLIENT_SECRET\` or standard input, never from a flag, and keeps it in its
credentials file only with \`--save-secret\` (then it renews the token, valid ${lifetime(TOKEN_LIFETIMES.access_token)}, by itself; otherwise log in again, or
keep \`LEADS_CLIENT_SECRET\` set). \`LEADS_CLIENT_ID\` with \`LEADS_CLIENT_SECRET\` work without a login, for scripts.
\`leads export\` writes every column of a lead; \`leads import\` takes the lead fields (and the page context's) as columns,
so a file of new leads like \`new-leads.csv\` above, not an export. It reads CSV with \`,\` or \`;\` (a UTF-8 byte order mark and
quoted line breaks are fine) and, while logged in, sends as the client (it needs \`leads:write\`).

## Webhooks

To have every new lead sent to your own system as it arrives, signed and retried, create a webhook endpoint with a
client that has \`webhooks:manage\`: see [webhooks]({base_url}/docs/webhooks).

## Swagger UI

In [/docs]({base_url}/docs), "Authorize" offers the client-credentials flow (\`operatorAuth\`): enter the client id and
secret and the scopes to ask for.
`,
  },
  {
    slug: 'webhooks',
    title: 'Webhooks: every new lead, signed and retried',
    summary: 'Receive each stored lead by signed webhook: events, headers, signature verification, retries, replay, rotation, and the API and CLI with curl.',
    markdown: `
# Webhooks: every new lead, signed and retried

A **webhook endpoint** is a URL of yours that the service \`POST\`s to each time something happens: today, each time a
lead is stored (\`lead.received\`), whichever way it came (API, web form, MCP, CLI). Every request is signed to
[Standard Webhooks 1.0](https://www.standardwebhooks.com/), so any of its libraries verifies it; it is retried for
about a day until your receiver answers 2xx, and every attempt is logged where an operator can read it. The message
is stored in the same transaction as the lead: no lead is acknowledged without its message, and each is delivered at
least once. Endpoints are managed with an operator token that grants \`webhooks:manage\` (see
[operators](/docs/operators)); why it works this way: decision 0027 (\`docs/decisions/0027-webhooks-outbox.md\`).

## Events

| \`type\` | sent | \`data\` |
|---|---|---|
| \`lead.received\` | once per stored lead, to every enabled endpoint subscribed to it | the lead, exactly as \`GET /api/v1/leads/{id}\` shows it |
| \`lead.erased\` | when leads are erased, by a data-subject request or the retention period ([privacy]({base_url}/docs/privacy)): erase your copies | \`{"lead_ids": […], "reason": "data_subject_request"}\` (or \`"retention"\`) |
| \`consent.revoked\` | when a person revokes consent to communications: stop sending them marketing | \`{"lead_ids": […], "category": "communications", "revoked_at": "…"}\` |
| \`webhook.test\` | by \`POST /api/v1/webhooks/{id}/test\`, to that endpoint alone | \`{"endpoint_id": "…"}\` |

An endpoint subscribes with \`events\` (\`["lead.received"]\`; without it, every event type). It receives the messages of
events after its creation. The body is JSON, built once when the event happens; every attempt and every replay sends
the same bytes:

\`\`\`json
{
  "type": "lead.received",
  "timestamp": "2026-11-22T13:45:14.345Z",
  "data": {
    "id": "019ab5f6-3a07-7c1e-9a55-2f0e4b8d6c21",
    "received_at": "2026-11-22T13:45:14.345Z",
    "nome": "Maria Fernanda Souza",
    "email": "maria.souza@souzaefilhos.com.br",
    "telefone": "+55 (11) 98765-4321",
    "telefone_e164": "+5511987654321",
    "empresa": "Souza & Filhos Comércio Ltda.",
    "mensagem": "Gostaria de uma proposta.",
    "origem": "site-contato",
    "channel": "form",
    "registration_id": null,
    "client_id": null
  }
}
\`\`\`

\`timestamp\` is when the event happened (for a lead, its \`received_at\`). New members may be added to \`data\`: ignore
those you do not know. The contract describes both events under \`webhooks\` in the
[OpenAPI document]({base_url}/docs/openapi-leads.json).

## Headers

| header | value |
|---|---|
| \`webhook-id\` | the message id, \`msg_…\`: the same on every retry and every replay of the message |
| \`webhook-timestamp\` | when this attempt was signed, in Unix seconds (each attempt is signed afresh) |
| \`webhook-signature\` | \`v1,<base64 HMAC-SHA256>\`; two of them, space-separated, for a day after a secret rotation |
| \`content-type\` | \`application/json\` |
| \`user-agent\` | \`leads-service/<version> (webhooks)\` |

## Verifying a signature

The endpoint's secret (\`whsec_…\`) is shown once, when the endpoint is created or its secret rotated. The signature is
an HMAC-SHA256, keyed with the base64-decoded part after \`whsec_\`, over \`{webhook-id}.{webhook-timestamp}.{body}\`.
Verify it over the **raw body** as it arrived: JSON parsed and serialised again is not the same bytes.

With the reference library ([\`standardwebhooks\`](https://www.npmjs.com/package/standardwebhooks) on npm; there are
libraries for Python, Go, Ruby, PHP, Java, Rust and more):

\`\`\`js
import express from 'express';
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.WEBHOOK_SECRET); // whsec_…
const app = express();

app.post('/hooks/leads', express.raw({ type: 'application/json' }), (req, res) => {
  let event;
  try {
    event = webhook.verify(req.body.toString('utf8'), req.headers); // throws on a bad signature or a stale timestamp
  } catch {
    return res.status(400).end();
  }
  res.status(204).end(); // answer first, then work
  console.log(event.type, event.data);
});

app.listen(4000);
\`\`\`

Or in plain Node, with nothing installed:

\`\`\`js
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The event if the request is genuine and fresh, else null. body: the raw request body as a string. */
export function verifyWebhook(secret, headers, body) {
  const id = headers['webhook-id'], timestamp = headers['webhook-timestamp'], signatures = headers['webhook-signature'];
  if (!id || !/^\\d+$/.test(timestamp ?? '') || !signatures) return null;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 5 * 60) return null; // more than 5 minutes off: refuse
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(\`\${id}.\${timestamp}.\${body}\`).digest();
  const matches = signatures.split(' ').some((signature) => {
    const given = Buffer.from(signature.startsWith('v1,') ? signature.slice(3) : '', 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? JSON.parse(body) : null;
}
\`\`\`

Accept the message when **any** of the signatures matches (after a rotation there are two), compare in constant time
(\`timingSafeEqual\`), and refuse a \`webhook-timestamp\` more than 5 minutes away from your clock: a captured request sent
again later fails, since the timestamp is part of what is signed.

## Answers, retries and timeouts

- **Any 2xx** is a success: the message is delivered and not sent again (unless replayed). The body of your answer
  is ignored, apart from its first 4 KiB, kept in the log.
- **Anything else is a failure**, 3xx included: redirects are not followed (point the endpoint at the final URL). No
  answer at all (a refused connection, a TLS error) is a failure too, and so is a whole exchange longer than 15
  seconds (\`WEBHOOK_TIMEOUT\`): answer first, then do the slow work.
- **429 or 503 with \`Retry-After\`** (seconds): the next attempt waits at least that long (at most an hour).
- **410 Gone** disables the endpoint at once (below).

The first attempt is immediate; after a failure the next ones wait, by default (\`WEBHOOK_RETRY_SCHEDULE\`):

| attempt | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 |
|---|---|---|---|---|---|---|---|---|
| after the previous one | at once | 5 s | 5 min | 30 min | 2 h | 5 h | 10 h | 10 h |

Each delay varies by ±20 % (jitter), so that receivers coming back from an outage are not hit by every retry at once.
The last attempt comes about 27 hours after the first; if it fails too, the delivery has **failed** for good (a replay
can still send it). An endpoint that has had no success for 5 days since its first failure (\`WEBHOOK_DISABLE_AFTER\`) is
disabled.

## Receive each message once

Delivery is *at least once*: a message can arrive twice (your 2xx was lost on the way back, an instance of the service
stopped mid-attempt), and replays send messages again on purpose. \`webhook-id\` is the same on every retry and replay
of a message, so keep the ids you have processed (as long as a replay may send them again: messages are kept for
\`WEBHOOK_RETENTION\`, 30 days) and answer 2xx to one you have already seen without doing the work again. For \`lead.received\`, the lead's \`data.id\` identifies it as
well. Messages can also arrive out of order (a retry overtaken by a newer message): sort by \`timestamp\` if order matters.

## 410, disabled endpoints and skipped messages

Answer **410 Gone** when the URL is retired: the endpoint is disabled at once, with a \`disabled_reason\` that names
the 410 and the message that got it. An endpoint is also disabled after \`WEBHOOK_DISABLE_AFTER\` of failures, or by an operator
(\`PATCH\` with \`{"status": "disabled"}\`). A disabled endpoint receives nothing: its pending deliveries, and every new
message meanwhile, test messages included, are recorded in its log as **skipped** (\`outcome: "skipped"\`,
\`attempt\`: the attempts made before, 0 for none, \`error: "endpoint_disabled"\`). Enabling it again (\`PATCH\` with \`{"status": "enabled"}\`) delivers new
messages; the skipped ones are sent only by a **replay** of their time range.

## Rotating the secret

\`POST /api/v1/webhooks/{id}/rotate-secret\` answers a new secret, once. For 24 hours after
(\`previous_secret_expires_at\`) every message is signed with both the new and the previous secret, two signatures in
\`webhook-signature\`, so you can deploy the new secret at your own pace without refusing a message; after that only the
new one signs. Rotating again within that day retires the older secret at once. Rotate when a secret may have leaked,
and from time to time.

## Which URLs are allowed

Webhooks go to \`https\` URLs on public addresses only, so that an endpoint cannot make the service reach its own
network (server-side request forgery). The name is resolved when the endpoint is created or its URL changed, and every
address it resolves to must be public (not private, loopback, link-local, unique-local, multicast, reserved, or such an
IPv4 address hidden in an IPv6 one); otherwise the request is a \`422\` with code \`address_not_allowed\`
(\`unresolvable_host\` when the name does not resolve; \`scheme_not_allowed\` for \`http\`; \`credentials_not_allowed\` for a
user name or password in the URL). The name is resolved and checked again at every attempt, and the connection goes to
the address that was checked, so a DNS answer that changes later leads nowhere (a failed attempt with
\`error: "address_not_allowed: <range>"\`). For development and tests, \`WEBHOOKS_ALLOW_PRIVATE=true\` on the service
allows \`http\` and private or loopback addresses; never set it in production.

## The API with curl

These blocks run in order in one bash session and need \`curl\`, Node.js (for the CLI) and
[\`jq\`](https://jqlang.org/), which takes values out of the JSON answers. Set first what is yours: \`BASE\`, the service;
\`SERVICE_DIR\`, its folder on the machine it runs on; \`RECEIVER_URL\`, your receiver. The default receiver is the
Express one above listening on port 4000 of this machine; it is \`http\` on a loopback address, so the service must run
with \`WEBHOOKS_ALLOW_PRIVATE=true\` (development only: see "Which URLs are allowed" above). Then an operator client with
\`webhooks:manage\` (on the server, as in [operators](/docs/operators)) and a token:

\`\`\`sh
BASE=\${BASE:-{base_url}}
SERVICE_DIR=\${SERVICE_DIR:-.}
RECEIVER_URL=\${RECEIVER_URL:-http://localhost:4000/hooks/leads}
npm --prefix "$SERVICE_DIR" run --silent clients:create -- \\
  --name "Webhooks" --scope "webhooks:manage" | tail -n 1 > client.json
CLIENT_ID=$(jq -r .client_id client.json)
CLIENT_SECRET=$(jq -r .client_secret client.json)
TOKEN=$(curl -s $BASE/oauth2/token -u "$CLIENT_ID:$CLIENT_SECRET" \\
  -d grant_type=client_credentials -d scope=webhooks:manage | jq -r .access_token)
\`\`\`

Create an endpoint (\`201\`; \`url\` required, \`events\` and \`description\` optional). Keep the secret: it is not shown
again.

\`\`\`sh
jq -n --arg url "$RECEIVER_URL" '{url: $url, events: ["lead.received"], description: "CRM sync"}' |
  curl -s $BASE/api/v1/webhooks -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\
    -d @- > endpoint.json
WEBHOOK_ID=$(jq -r .id endpoint.json)
WEBHOOK_SECRET=$(jq -r .secret endpoint.json)
\`\`\`

List the endpoints (oldest first; at most \`WEBHOOK_MAX_ENDPOINTS\`, 50 by default, exist at once) and read one:

\`\`\`sh
curl -s $BASE/api/v1/webhooks -H "Authorization: Bearer $TOKEN" | jq .
curl -s $BASE/api/v1/webhooks/$WEBHOOK_ID -H "Authorization: Bearer $TOKEN" | jq .
\`\`\`

Send a test message (\`202\`) and watch its attempts in the delivery log:

\`\`\`sh
MESSAGE_ID=$(curl -s -X POST $BASE/api/v1/webhooks/$WEBHOOK_ID/test \\
  -H "Authorization: Bearer $TOKEN" | jq -r .message_id)
curl -s "$BASE/api/v1/webhooks/$WEBHOOK_ID/deliveries?message_id=$MESSAGE_ID" \\
  -H "Authorization: Bearer $TOKEN" | jq .
\`\`\`

The log (\`GET …/deliveries\`) lists attempts newest first, \`limit\` 1 to 200 (50 by default) a page, the next page with
\`cursor=<next_cursor>\`. Each line has \`message_id\`, \`event_type\`, \`attempt\`, \`attempted_at\`, \`outcome\` (\`succeeded\`,
\`failed\`, \`skipped\`), \`status_code\`, \`error\` (\`timeout\`, \`connection_refused\`, \`endpoint_disabled\`, …), \`latency_ms\`,
\`response_body\` (the first 4 KiB of your answer) and \`next_attempt_at\`. It is kept for \`WEBHOOK_RETENTION\` (30 days).

Send again every message of a time range (\`since\` inclusive, \`until\` exclusive and optional), whatever became of it,
each with its original \`webhook-id\`; the answer counts them (\`202 {"replayed": n}\`):

\`\`\`sh
curl -s $BASE/api/v1/webhooks/$WEBHOOK_ID/replay -H "Authorization: Bearer $TOKEN" \\
  -H 'Content-Type: application/json' -d '{"since": "2026-11-22T00:00:00-03:00", "until": "2026-11-23T00:00:00-03:00"}' | jq .
\`\`\`

Rotate the secret (the previous one signs beside the new one for 24 hours):

\`\`\`sh
WEBHOOK_SECRET=$(curl -s -X POST $BASE/api/v1/webhooks/$WEBHOOK_ID/rotate-secret \\
  -H "Authorization: Bearer $TOKEN" | jq -r .secret)
\`\`\`

Disable the endpoint, enable it again, change it (\`url\`, \`events\`, \`description\`, \`null\` clears it), delete it
(\`204\`, with its log):

\`\`\`sh
curl -s -X PATCH $BASE/api/v1/webhooks/$WEBHOOK_ID -H "Authorization: Bearer $TOKEN" \\
  -H 'Content-Type: application/json' -d '{"status": "disabled"}' | jq .status
curl -s -X PATCH $BASE/api/v1/webhooks/$WEBHOOK_ID -H "Authorization: Bearer $TOKEN" \\
  -H 'Content-Type: application/json' -d '{"status": "enabled"}' | jq .status
curl -s -X PATCH $BASE/api/v1/webhooks/$WEBHOOK_ID -H "Authorization: Bearer $TOKEN" \\
  -H 'Content-Type: application/json' -d '{"description": null}' | jq .
curl -s -X DELETE $BASE/api/v1/webhooks/$WEBHOOK_ID -H "Authorization: Bearer $TOKEN" \\
  -o /dev/null -w '%{http_code}\\n'
\`\`\`

Errors are [problems](/docs/errors): \`404 webhook_not_found\` for an unknown id, \`409 webhook_limit_reached\` past
\`WEBHOOK_MAX_ENDPOINTS\`, \`422 validation_failed\` whose \`errors[]\` name each member by JSON Pointer (\`/url\`,
\`/events/0\`, …) with a code such as \`scheme_not_allowed\`, \`address_not_allowed\`, \`unknown_event\` or \`empty_patch\`.

## The CLI

Logged in as an operator client with \`webhooks:manage\` ([operators](/docs/operators), step 5):

\`\`\`sh
curl -fsSL $BASE/cli/leads -o leads && chmod +x leads
LEADS_CLIENT_SECRET="$CLIENT_SECRET" ./leads login --client-id "$CLIENT_ID"
./leads webhooks add "$RECEIVER_URL" --event lead.received --description "CRM sync"   # prints the secret, once
./leads webhooks list
WEBHOOK_ID=$(./leads webhooks list --json | jq -r '.data[0].id')
./leads webhooks test "$WEBHOOK_ID"
./leads webhooks deliveries "$WEBHOOK_ID"
./leads webhooks rotate "$WEBHOOK_ID"        # prints the new secret, once
./leads webhooks remove "$WEBHOOK_ID"
\`\`\`

## Running the service

Webhooks need nothing to set up: every instance delivers (\`WEBHOOK_WORKER=true\`), sharing the work through the
database, and the instance that stores a lead starts its delivery at once. The settings (\`WEBHOOK_RETRY_SCHEDULE\`,
\`WEBHOOK_TIMEOUT\`, \`WEBHOOK_DISABLE_AFTER\`, \`WEBHOOK_RETENTION\`, \`WEBHOOKS_ALLOW_PRIVATE\`, \`WEBHOOK_WORKER\`,
\`WEBHOOK_CONCURRENCY\`, \`WEBHOOK_ENDPOINT_CONCURRENCY\`, \`WEBHOOK_POLL_INTERVAL\`, \`WEBHOOK_MAX_ENDPOINTS\`) are in the
README's configuration table. \`GET /api/v1/health\` reports the backlog (\`webhooks.pending\` and
\`webhooks.oldest_pending_age_seconds\`).
`,
  },
  {
    slug: 'privacy',
    title: 'Privacy: what is stored, why, for how long, and the rights of the people it concerns',
    summary: 'What the service stores about a person and why (LGPD), for how long, and how access, erasure and revocation of consent are carried out.',
    markdown: `
# Privacy: what is stored, why, for how long, and the rights of the people it concerns

The service keeps the leads people send through the company's site, agents and operators. This page says what it stores,
on which legal basis (Lei Geral de Proteção de Dados, LGPD, Lei 13.709/2018), for how long, and how the company answers
the requests of the people those leads are about. Why it works this way: decision 0029
(\`docs/decisions/0029-data-subject-requests.md\`).

## What is stored

| Data | Where | Notes |
|---|---|---|
| The lead's fields: \`nome\`, \`email\`, \`telefone\` (and its E.164 form), \`empresa\`, \`mensagem\`, \`origem\` | \`leads\` | as sent, normalised; the address also case-folded, to find a person's leads |
| Legal bases (\`legal_bases\`) with their evidence | \`leads\` | for each: category, type, status, when and through which channel it was recorded, the fingerprint of the wording shown, and \`revoked_at\` |
| The consent wordings | \`consent_texts\` | each distinct wording once, named by its SHA-256, however many leads show it |
| Attribution (\`context\`) | \`leads\` | page URL and title, referrer, UTM parameters, click ids; URLs without query strings |
| Who sent it | \`leads\` | the channel (api, form, mcp, cli), the agent registration or operator client |
| Each lead as a webhook message, and the log of its deliveries | \`webhook_messages\`, \`webhook_attempts\` | the receivers' answers are kept (the first 4 KiB) |
| Idempotency keys | \`idempotency_keys\` | a fingerprint of the body, the lead id and the receipt |
| Agent registrations | \`agent_registrations\` | the contacts and verified address an agent gave |
| The audit of each data-subject request | \`data_subject_requests\` | no personal data: see below |

## Why

A lead is stored on the basis the form or caller states in \`legal_bases\`: consent (LGPD Art. 7 I and Art. 8) for
communications, or another basis of Art. 7 for processing (legitimate interest, Art. 7 IX and Art. 10; a contract,
Art. 7 V). Art. 8 §2 puts the burden of proving consent on the controller: that is why each consent entry records when,
through which channel and with which exact wording it was given, and why the wording is kept as it was shown.

## For how long

| What | How long |
|---|---|
| Leads | until erased, or \`LEAD_RETENTION_DAYS\` days when set (unset: kept until a request erases them). Every instance erases the expired ones at start and hourly, in batches, with everything that refers to them, and sends \`lead.erased\` with \`reason: retention\` |
| Idempotency keys | 24 hours |
| Webhook messages and their log | \`WEBHOOK_RETENTION\` (30 days by default), and never longer than their lead |
| Audit of data-subject requests | kept: it holds no personal data |

## The rights of Art. 18, and how they are exercised

The company's operators carry out the requests for the person, once they have confirmed who is asking. Each request
names the person by the e-mail address their leads carry, matched whatever its letter case. Each answers a receipt with
the lead ids and counts, and leaves an audit record.

| Right | Endpoint | Scope | CLI |
|---|---|---|---|
| Confirmation and access (II), portability (V) | \`POST /api/v1/data-subject-requests/access\` | \`leads:read\` | \`leads subject access <email>\` |
| Erasure (IV, VI) | \`POST /api/v1/data-subject-requests/erasure\` | \`leads:erase\` | \`leads subject erase <email>\` |
| Revocation of consent (IX; Art. 8 §5) | \`POST /api/v1/data-subject-requests/consent-revocation\` | \`leads:erase\` | \`leads subject revoke <email>\` |

With an operator client made on the server as in [operators]({base_url}/docs/operators) (this block runs in bash with
\`curl\` and [\`jq\`](https://jqlang.org/); \`BASE\` is the service, \`SERVICE_DIR\` its folder):

\`\`\`sh
BASE=\${BASE:-{base_url}}
SERVICE_DIR=\${SERVICE_DIR:-.}
npm --prefix "$SERVICE_DIR" run --silent clients:create -- \\
  --name "Privacy requests" --scope "leads:read leads:erase" | tail -n 1 > client.json
TOKEN=$(curl -s $BASE/oauth2/token -u "$(jq -r .client_id client.json):$(jq -r .client_secret client.json)" \\
  -d grant_type=client_credentials | jq -r .access_token)
curl -s -X POST $BASE/api/v1/data-subject-requests/access \\
  -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\
  -d '{"email": "maria.souza@souzaefilhos.com.br"}'
\`\`\`

**Access** answers every lead of the person as the read API shows it (JSON, a portable format), and the consent
wordings those leads name.

**Erasure** deletes every lead of the person, in batches of 100, each one transaction with what refers to those leads:
their webhook messages, deliveries (pending ones are cancelled: a delivery already under way may finish, and is not
logged) and attempt logs; the consent wordings no other lead shows; the address in agent registrations. Each batch sends
a \`lead.erased\` webhook (lead ids, \`reason: data_subject_request\`), so that the systems that received the leads erase
them too. Endpoints that received \`lead.received\` before these events existed were subscribed to them.

What an erasure keeps, with no personal data: the audit record (an HMAC-SHA256 of the case-folded address with a key
kept in the database, the operator client, the time, counts and lead ids), the idempotency keys of the erased leads
(key and caller scope, marked erased, for the rest of their 24 hours: a retry of the lead gets **410 \`lead_erased\`** and
stores nothing), and the lead ids in the \`lead.erased\` messages.

**Revocation** declines, from now on, the person's \`communications\` basis on every stored lead: a granted entry becomes
\`declined\` with \`revoked_at\`; a lead without one gets a declined entry (\`channel: data_subject_request\`). A lead the
person sends later states its own consent. When any lead changed, a \`consent.revoked\` webhook (lead ids, category,
\`revoked_at\`) tells the receivers to stop.

Errors are listed in [errors]({base_url}/docs/errors); webhooks in [webhooks]({base_url}/docs/webhooks); operator
tokens in [operators]({base_url}/docs/operators).
`,
  },
  {
    slug: 'quickstart',
    title: 'Quickstart',
    summary: 'Validate a lead in the sandbox, then submit it, safely retried with an Idempotency-Key.',
    markdown: `
# Quickstart

The API lives under \`{base_url}/api/v1\`. Every request and response is JSON; every error is an
[RFC 9457 problem](/docs/errors) with a stable \`code\`, a \`detail\` and a \`hint\`.

## 1. Check a lead in the sandbox

The sandbox runs exactly the validation and normalisation of the lead endpoint and stores nothing.

\`\`\`sh
curl -s {base_url}/api/v1/sandbox \\
  -H 'Content-Type: application/json' \\
  -d '{"nome": "Maria  da Silva", "email": "maria@Empresa.com.br", "telefone": "(11) 98765-4321"}'
\`\`\`

The answer is \`200\` with \`{"valid": true, "stored": false, "lead": {…}}\`: the lead as it would be stored
(name whitespace collapsed, e-mail domain lower-cased, telephone also in E.164).

## 2. Submit it

\`\`\`sh
curl -s {base_url}/api/v1/lead \\
  -H 'Content-Type: application/json' \\
  -H 'Idempotency-Key: "7f9c2b0e-3a51-4d7e-9a57-2f1f0f3e9b11"' \\
  -d '{"nome": "Maria da Silva", "email": "maria@empresa.com.br", "origem": "site"}'
\`\`\`

\`201\` with \`{"id": "…", "status": "received", "received_at": "…"}\`. Sending the same request again with the same
key within ${KEY_LIFETIME_MS / 3_600_000} hours returns the same answer and stores nothing new; the same key with a different body is refused
with \`422 idempotency_key_reused\`, and while the first request is still running a retry gets
\`409 idempotency_request_in_progress\`. Keys are private to each caller (its token, or else its IP address).

## Fields

| field | required | rule (after trimming, in characters) |
|---|---|---|
| nome | yes | 1–120; inner whitespace collapsed |
| email | yes | 3–254; one @, a local part of at most 64 bytes (UTF-8) and a dotted domain name, not an IP address; domain lower-cased |
| telefone | no | 8–32; at least 8 digits, and only digits, spaces and \`+ - ( ) .\`; also stored as E.164 when it is a valid number (default region BR) |
| empresa | no | 1–120; inner whitespace collapsed |
| mensagem | no | 1–5000; line breaks kept |
| origem | no | 1–64 |

All values are strings, normalised to Unicode NFC. Control characters, bidirectional overrides, Unicode tag characters
and unknown fields are refused, and so is a value with nothing visible in it (only spaces, format characters, lone
combining marks, fillers and the like), with \`422 validation_failed\`, whose \`errors[]\` names each field by JSON Pointer.
Bodies are limited to ${inKiB(BODY_LIMIT_BYTES)} and must be \`application/json\` in UTF-8.

## Next

- The whole contract: [OpenAPI document]({base_url}/docs/openapi-leads.json), explorable at [/docs]({base_url}/docs).
- [Error catalog]({base_url}/docs/errors) and [versioning policy]({base_url}/docs/api-versioning).
`,
  },
  {
    slug: 'api-versioning',
    title: 'API versioning and deprecation policy',
    summary: 'How versions are named, how long a deprecated version lives, and how clients are told.',
    markdown: `
# API versioning and deprecation policy

## How versions are named

The major version is part of the path: \`{base_url}/api/v1/…\`. Within a version, changes are additive only: new
endpoints, new optional request fields, new response fields and new error codes. Clients must ignore response
members they do not know. Anything that would break a correct client (removing or renaming a field, tightening a
rule, changing a status code) ships as a new version, \`/api/v2\`, served side by side with the old one.

The root documents (\`/.well-known/*\`, \`/oauth2/*\`, \`/mcp\`) follow their own standards and are not versioned by path.

## How long a deprecated version lives

A version or endpoint is announced as deprecated at least **6 months** before it is switched off (its sunset).
During that time it keeps working unchanged; after the sunset it may be removed.

## How clients are told

Every response of a deprecated route, errors included, carries:

- \`Deprecation: @<unix seconds>\` — when the deprecation took or takes effect ([RFC 9745](https://www.rfc-editor.org/rfc/rfc9745));
- \`Sunset: <HTTP date>\` — when it stops working, once decided ([RFC 8594](https://www.rfc-editor.org/rfc/rfc8594));
- \`Link: <{base_url}/docs/api-versioning>; rel="deprecation"\`, plus \`rel="sunset"\` when a sunset is set.

These headers are exposed to browsers through CORS. The deprecations in force are listed in the service
configuration (\`API_DEPRECATIONS\`); none is in force by default.
`,
  },
];
