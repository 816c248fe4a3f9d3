/** Hand-written documentation pages (Markdown). The errors catalog page is generated from the catalog instead. */
export interface DocPageSource {
  slug: string;
  title: string;
  summary: string;
  /** Markdown; `{base_url}` is replaced by PUBLIC_BASE_URL when the page is built. */
  markdown: string;
}

export const DOC_PAGES: DocPageSource[] = [
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
key within 24 hours returns the same answer and stores nothing new; the same key with a different body is refused
with \`422 idempotency_key_reused\`, and while the first request is still running a retry gets
\`409 idempotency_request_in_progress\`. Keys are private to each caller (its token, or else its IP address).

## Fields

| field | required | rule (after trimming, in characters) |
|---|---|---|
| nome | yes | 1–120; inner whitespace collapsed |
| email | yes | 3–254; one @ and a dotted domain; domain lower-cased |
| telefone | no | 8–32; digits, spaces and \`+ - ( ) .\`; also stored as E.164 when it is a valid number (default region BR) |
| empresa | no | 1–120; inner whitespace collapsed |
| mensagem | no | 1–5000; line breaks kept |
| origem | no | 1–64 |

All values are strings, normalised to Unicode NFC. Control characters, bidirectional overrides and unknown fields are
refused with \`422 validation_failed\`, whose \`errors[]\` names each field by JSON Pointer.
Bodies are limited to 16 KiB and must be \`application/json\` in UTF-8.

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
During that time it keeps working unchanged. After the sunset it answers \`404 not_found\` or \`410\`.

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
