import { execFileSync } from 'node:child_process';
import type { ServerProcess } from './server-process.js';
import type { TestDatabase } from './database.js';
import type { SmtpSink } from './smtp-sink.js';

// The steps of a person and an operator around notification recipients, for the suites that run the built service.

/** Polls `check` every 100 ms until it gives a value; throws naming `what` after `timeoutMs`. */
export async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `npm run clients:create` for the built service's database, then an access token with notifications:manage. */
export async function notificationsToken(server: ServerProcess, database: TestDatabase, secretsKey: string): Promise<string> {
  const output = execFileSync(
    process.execPath,
    ['dist/src/oauth/operator-clients.command.js', 'create', '--name', 'Notifications e2e', '--scope', 'notifications:manage'],
    {
      env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: server.baseUrl, SECRETS_KEY: secretsKey, ...database.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const client = JSON.parse(output.toString().trim().split('\n').pop()!) as { client_id: string; client_secret: string };
  const res = await fetch(`${server.baseUrl}/oauth2/token`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'notifications:manage' }),
  });
  if (res.status !== 200) throw new Error(`token: HTTP ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Adds a recipient through the API and confirms it (confirmByMail). Returns its id. */
export async function confirmedRecipient(
  server: ServerProcess,
  token: string,
  sink: SmtpSink,
  recipient: { email: string; mode: 'immediate' | 'daily_digest'; language?: 'pt-BR' | 'en'; include_personal_data?: boolean },
): Promise<string> {
  const res = await fetch(`${server.baseUrl}/api/v1/notification-recipients`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(recipient),
  });
  if (res.status !== 201) throw new Error(`adding a recipient: HTTP ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  await confirmByMail(server, sink, recipient.email);
  return id;
}

/** Confirms an address as a person does: the link of its confirmation e-mail (as `sink` took it), then the page's button. */
export async function confirmByMail(server: ServerProcess, sink: SmtpSink, email: string): Promise<void> {
  const confirmation = await until('the confirmation e-mail', () => sink.to(email)[0]);
  const link = /https?:\/\/\S+\/notifications\/confirm\?token=[^\s>]+/.exec(confirmation.parsed.text ?? '')![0];
  const page = await (await fetch(link, { headers: { Accept: 'text/html' } })).text();
  const form = /<form method="post" action="([^"]+)">\s*<input type="hidden" name="token" value="([^"]+)">/.exec(page)!;
  const action = new URL(form[1].replace(/&amp;/g, '&'), server.baseUrl);
  const confirmed = await fetch(action, { method: 'POST', body: new URLSearchParams({ token: form[2] }), headers: { Accept: 'text/html' } });
  if (confirmed.status !== 200) throw new Error(`confirming: HTTP ${confirmed.status}`);
}
