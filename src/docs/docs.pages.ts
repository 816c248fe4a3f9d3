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

## 1. Discover

\`\`\`sh
curl -s {base_url}/.well-known/oauth-protected-resource     # RFC 9728: which authorization server, which scopes
curl -s {base_url}/.well-known/oauth-authorization-server   # RFC 8414: token, revocation and JWKS endpoints, agent_auth
\`\`\`

\`agent_auth.identity_endpoint\` is where agents register. \`/.well-known/openid-configuration\` serves the same
document for OpenID clients; the service has no authorization endpoint and issues no ID tokens, so the document
names none (strict OpenID Connect validators expect \`authorization_endpoint\` and will not find it).

## 2. Register

Anonymous, recommended for lead-capture agents:

\`\`\`sh
curl -s {base_url}/api/v1/agent/identity -H 'Content-Type: application/json' \\
  -d '{"type": "anonymous", "client_name": "my-agent", "contacts": ["ops@example.com"]}'
\`\`\`

Or with a contact e-mail (recorded as \`email\` with \`email_verified: false\` until a future claim ceremony verifies it):

\`\`\`sh
curl -s {base_url}/api/v1/agent/identity -H 'Content-Type: application/json' \\
  -d '{"type": "identity_assertion", "assertion_type": "verified_email", "assertion": "ana@example.com"}'
\`\`\`

The answer (\`200\`, \`Cache-Control: no-store\`) holds \`registration_id\`, \`identity_assertion\` (a JWT signed by the
service, valid for ${lifetime(TOKEN_LIFETIMES.assertion)} and reusable until then), \`assertion_expires\`, \`scopes\`, and a \`claim_token\` shown
only this once. \`client_name\` and \`contacts\` are self-reported: stored, never trusted and never e-mailed.

## 3. Exchange the assertion for an access token

\`\`\`sh
curl -s {base_url}/oauth2/token \\
  -d grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer \\
  --data-urlencode "assertion=$ASSERTION"
\`\`\`

The body is form-encoded (RFC 7523). The answer is \`{"access_token", "token_type": "Bearer", "expires_in": ${TOKEN_LIFETIMES.access_token},
"scope": "leads:write"}\`: a JWT access token (RFC 9068) valid for ${lifetime(TOKEN_LIFETIMES.access_token)}. There is no refresh token. Errors follow
RFC 6749 (\`error\`, \`error_description\`) and also carry the problem members (\`code\`, \`detail\`, \`hint\`); any
problem with the assertion is \`invalid_grant\`.

## 4. Call the API

\`\`\`sh
curl -s {base_url}/api/v1/lead -H "Authorization: Bearer $ACCESS_TOKEN" \\
  -H 'Content-Type: application/json' -d '{"nome": "Ana", "email": "ana@example.com"}'
\`\`\`

Send the token only in the \`Authorization\` header. A token that is present but malformed, expired or revoked is
refused with \`401 invalid_token\` and \`WWW-Authenticate: Bearer error="invalid_token", resource_metadata=…\`; it is
never silently treated as anonymous. To call anonymously, send no \`Authorization\` header at all.

## 5. Renew

When the access token expires, exchange the same identity assertion again (step 3). When the assertion itself has
expired (\`assertion_expires\`), register again (step 2).

## 6. Revoke

\`\`\`sh
curl -s {base_url}/oauth2/revoke --data-urlencode "token=$ACCESS_TOKEN"   # this access token, on every instance at once
curl -s {base_url}/oauth2/revoke --data-urlencode "token=$ASSERTION"      # the whole registration: its assertion and all its tokens
\`\`\`

Revocation (RFC 7009) answers \`200\` for known and unknown tokens alike.

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
| \`webhooks:manage\`, \`leads:erase\` | reserved for webhooks and data-subject requests |

The shell blocks below run in order in one shell; they use \`jq\` to take values out of JSON answers.

## 1. Create a client (on the server)

\`\`\`sh
npm run --silent clients:create -- --name "CRM" --scope "leads:read leads:export leads:write" | tail -n 1 > client.json
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
ACCESS_TOKEN=$(curl -s {base_url}/oauth2/token -u "$CLIENT_ID:$CLIENT_SECRET" \\
  -d grant_type=client_credentials -d scope="leads:read leads:export" | jq -r .access_token)
\`\`\`

\`-u\` is \`client_secret_basic\`; sending \`client_id\` and \`client_secret\` as form fields (\`client_secret_post\`) works
too. \`scope\` is optional and must be a subset of the client's. The token is an RFC 9068 JWT valid for
${lifetime(TOKEN_LIFETIMES.access_token)}: ask for a new one when it expires. Wrong credentials are \`401 invalid_client\`.
Any OAuth library's client-credentials grant works unmodified; the token endpoint is in
[/.well-known/oauth-authorization-server]({base_url}/.well-known/oauth-authorization-server).

## 3. List leads

\`\`\`sh
curl -s "{base_url}/api/v1/leads?limit=50" -H "Authorization: Bearer $ACCESS_TOKEN" | jq .
\`\`\`

\`{"data": [lead, …], "next_cursor": "…" | null}\`, newest first. Pass \`cursor=<next_cursor>\` for the next page (the
\`Link: <…>; rel="next"\` header holds that URL). Filters: \`since\` and \`until\` (RFC 3339 with a time zone, on
\`received_at\`), \`origem\` (exact) and \`email\` (exact, case-insensitive). \`GET /api/v1/leads/{id}\` reads one lead.
A lead as read has \`channel\` (\`api\`, \`form\`, \`mcp\` or \`cli\`: a label of the surface it came through) and
\`registration_id\` or \`client_id\` when an agent or an operator sent it. A bad query parameter is a \`400 invalid_query\`
whose \`errors[]\` name it.

## 4. Export

\`\`\`sh
curl -s -OJ "{base_url}/api/v1/leads/export?format=csv&delimiter=%3B" -H "Authorization: Bearer $ACCESS_TOKEN"
\`\`\`

CSV (RFC 4180, UTF-8, a header row) or \`format=jsonl\` (JSON Lines), with the list's filters, streamed however many
leads there are; the file name carries the date. \`delimiter=;\` is the profile for spreadsheets in Brazilian locales
(semicolons and a UTF-8 byte order mark); it goes with CSV only. Cells that a spreadsheet would read as a formula are
prefixed with \`'\`; plain numbers such as \`+5511987654321\` are left alone. A few exports run at once on each
instance; one more is \`503 export_busy\` with \`Retry-After\`.

## 5. The CLI

\`\`\`sh
curl -fsSL {base_url}/cli/leads -o leads && chmod +x leads
LEADS_CLIENT_SECRET="$CLIENT_SECRET" ./leads login --client-id "$CLIENT_ID"
./leads list
./leads export --format csv --output leads.csv
./leads import leads.csv
\`\`\`

\`leads login\` reads the secret from \`LEADS_CLIENT_SECRET\` or standard input, never from a flag, and keeps it in its
credentials file only with \`--save-secret\` (then it renews the token, valid ${lifetime(TOKEN_LIFETIMES.access_token)}, by itself; otherwise log in again, or
keep \`LEADS_CLIENT_SECRET\` set). \`LEADS_CLIENT_ID\` with \`LEADS_CLIENT_SECRET\` work without a login, for scripts.
\`leads import\` reads CSV with \`,\` or \`;\` (a UTF-8 byte order mark and
quoted line breaks are fine) and, while logged in, sends as the client (it needs \`leads:write\`).

## Swagger UI

In [/docs]({base_url}/docs), "Authorize" offers the client-credentials flow (\`operatorAuth\`): enter the client id and
secret and the scopes to ask for.
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
