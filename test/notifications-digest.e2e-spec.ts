/** @system the built service as a process, with a real SMTP server */
import { randomBytes } from 'node:crypto';
import { TestDatabase, freshDatabase } from './support/database.js';
import { confirmedRecipient, notificationsToken, until } from './support/recipient-steps.js';
import { seedLeads } from './support/seed-leads.js';
import { GENEROUS_LIMITS, ServerProcess, freePort, startServer } from './support/server-process.js';
import { SmtpSink } from './support/smtp-sink.js';
import { storedLead } from './support/stored-leads.js';

// The daily digest (issue 34) as its recipients get it: at NOTIFY_DIGEST_AT on the TIME_ZONE clock (here 00:00 UTC,
// which every run is past, so a start is always "back up after the time"), one e-mail per confirmed daily-digest
// recipient about the previous day, in its language, with or without personal data; once, whatever the restarts.

const DAY_MS = 86_400_000;
const secretsKey = randomBytes(32).toString('base64');
let sink: SmtpSink;
let database: TestDatabase;
let port: number;
let server: ServerProcess;

const start = () =>
  startServer(
    {
      ...GENEROUS_LIMITS,
      // Debug: the digest's lines say when an instance has looked at the day.
      LOG_LEVEL: 'debug',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      SECRETS_KEY: secretsKey,
      SMTP_URL: sink.url,
      MAIL_FROM: 'leads@example.com',
      TIME_ZONE: 'UTC',
      NOTIFY_DIGEST_AT: '00:00',
      WEBHOOK_POLL_INTERVAL: '200ms',
      ...database.env,
    },
    port,
  );

/** Waits until the outbox has sent everything (health's backlog). */
const drained = () =>
  until('an empty outbox', async () => {
    const health = (await (await fetch(`${server.baseUrl}/api/v1/health`)).json()) as { webhooks?: { pending?: number } };
    return health.webhooks?.pending === 0 ? true : undefined;
  });

beforeAll(async () => {
  sink = await SmtpSink.start();
  database = await freshDatabase();
  port = await freePort();
  server = await start();
});

afterAll(async () => {
  await server?.stop();
  await database?.drop();
  await sink?.close();
});

it('sends each confirmed daily-digest recipient one digest of yesterday, in its language, once across restarts', async () => {
  const token = await notificationsToken(server, database, secretsKey);
  const ana = 'ana.digest@example.com';
  const bob = 'bob.digest@example.com';
  const now = 'now.immediate@example.com';
  await confirmedRecipient(server, token, sink, { email: ana, mode: 'daily_digest', language: 'pt-BR' });
  await confirmedRecipient(server, token, sink, { email: bob, mode: 'daily_digest', language: 'en', include_personal_data: false });
  await confirmedRecipient(server, token, sink, { email: now, mode: 'immediate' });
  // The service started with nothing to say today: no digest so far.
  expect(server.output()).toContain('Daily digest: nothing to say');
  expect([sink.to(ana).length, sink.to(bob).length]).toEqual([1, 1]);

  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const yesterday = [
    storedLead(1, { nome: 'Beatriz Lima', email: 'beatriz@cliente.com.br', receivedAt: new Date(today - DAY_MS + 3_600_000) }),
    storedLead(2, { nome: 'Carlos Souza', email: 'carlos@cliente.com.br', receivedAt: new Date(today - 60_000) }),
  ];
  const held = storedLead(3, { nome: 'Retida Pereira', screeningVerdict: 'held', receivedAt: new Date(today - 2 * DAY_MS) });
  const todays = storedLead(4, { nome: 'Hoje Santos', receivedAt: new Date(today + 1000) });
  const before = storedLead(5, { nome: 'Antes Costa', receivedAt: new Date(today - DAY_MS - 1000) });
  await seedLeads(database, [...yesterday, held, todays, before]);

  // Back up after the digest time: the day's digest goes out.
  await server.stop();
  server = await start();
  const digestOf = (email: string) =>
    sink
      .to(email)
      .slice(1)
      .map(({ parsed }) => ({ subject: parsed.subject ?? '', text: parsed.text ?? '' }));
  await until('both digests', () => (digestOf(ana).length && digestOf(bob).length ? true : undefined));
  await drained();

  const day = new Date(today - DAY_MS);
  const [pt] = digestOf(ana);
  expect(pt.subject).toBe(`2 novos leads em ${new Intl.DateTimeFormat('pt-BR', { timeZone: 'UTC', dateStyle: 'long' }).format(day)}`);
  for (const lead of yesterday) expect(pt.text).toContain(`${lead.nome} | ${lead.email}`);
  expect(pt.text).toContain('1 lead aguardando revisão');
  for (const other of ['Retida Pereira', 'Hoje Santos', 'Antes Costa']) expect(pt.text).not.toContain(other);
  const since = new Date(today - DAY_MS).toISOString();
  expect(pt.text).toContain(
    `${server.baseUrl}/api/v1/leads/export?since=${encodeURIComponent(since)}&until=${encodeURIComponent(new Date(today).toISOString())}`,
  );

  const [en] = digestOf(bob);
  expect(en.subject).toBe(`2 new leads on ${new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', dateStyle: 'long' }).format(day)}`);
  expect(en.text).toContain('1 lead awaiting review');
  for (const lead of yesterday) {
    expect(en.text).toContain(lead.id);
    expect(en.text).not.toContain(lead.nome);
    expect(en.text).not.toContain(lead.email);
  }
  // The immediate recipient gets no digest (nor notifications of leads stored without the API).
  expect(digestOf(now)).toEqual([]);

  // Started again the same day: it looks, finds the day's digests written, and writes none again.
  await server.stop();
  server = await start();
  await until('the digest look of the new start', () => (server.output().includes('Daily digest already written for every recipient') ? true : undefined));
  await drained();
  expect([digestOf(ana).length, digestOf(bob).length]).toEqual([1, 1]);
}, 120_000);
