/** @system the built service as processes, killed with SIGKILL, and a real SMTP server */
import { randomBytes } from 'node:crypto';
import { TestDatabase, freshDatabase } from './support/database.js';
import { GENEROUS_LIMITS, ServerProcess, freePort, startServer } from './support/server-process.js';
import { describeIf } from './support/skips.js';
import { confirmedRecipient, notificationsToken, until } from './support/recipient-steps.js';
import { SmtpSink } from './support/smtp-sink.js';

// Issue 34: nothing acknowledged is lost, for e-mail too. Every lead answered 201 gets its notification to a confirmed
// immediate recipient, across a kill -9 in the middle of a burst (at most once per lead, but for the documented resend
// after a crash between the SMTP server's acceptance and our record of it, which carries the same Message-ID); and two
// instances on one PostgreSQL send each notification once.

/** Longer than a lease the killed process held: 60 s of attempt timeout and 15 s of margin. */
const LEASE_WAIT_MS = 120_000;

let sink: SmtpSink;
const secretsKey = randomBytes(32).toString('base64');

beforeAll(async () => {
  sink = await SmtpSink.start();
});

afterAll(() => sink.close());

/** The settings of every instance of one suite: its database, the test's SMTP server, no screening rule holding leads. */
function serviceEnv(database: TestDatabase, port: number): Record<string, string> {
  return {
    ...GENEROUS_LIMITS,
    LOG_LEVEL: 'warn',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    SECRETS_KEY: secretsKey,
    SMTP_URL: sink.url,
    MAIL_FROM: 'leads@example.com',
    SCREENING_RULES: 'none',
    WEBHOOK_POLL_INTERVAL: '200ms',
    ...database.env,
  };
}

const leadBody = (run: string, i: number) => JSON.stringify({ nome: `Pessoa ${run}-${i}`, email: `pessoa.${run}.${i}@exemplo.com.br`, origem: 'rajada' });

/** POSTs `count` leads at once, to the servers in turn; returns the numbers of those answered 201. */
async function burst(servers: ServerProcess[], run: string, count: number, onAnswer?: (answered: number) => void): Promise<number[]> {
  const acknowledged: number[] = [];
  let answered = 0;
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      try {
        const res = await fetch(`${servers[i % servers.length].baseUrl}/api/v1/lead`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: leadBody(run, i),
        });
        if (res.status === 201) acknowledged.push(i);
      } catch {
        // The service was killed before it answered: not acknowledged.
      }
      onAnswer?.(++answered);
    }),
  );
  return acknowledged;
}

/** The distinct Message-IDs, and the copies received, of each lead's notification to `email`. */
function notificationsOf(run: string, email: string): Map<number, { ids: Set<string>; copies: number }> {
  const byLead = new Map<number, { ids: Set<string>; copies: number }>();
  for (const { parsed } of sink.to(email)) {
    const match = new RegExp(`^Novo lead: Pessoa ${run}-(\\d+) \\(rajada\\)$`).exec(parsed.subject ?? '');
    if (!match) continue;
    const entry = byLead.get(Number(match[1])) ?? { ids: new Set<string>(), copies: 0 };
    entry.ids.add(parsed.messageId ?? '');
    entry.copies++;
    byLead.set(Number(match[1]), entry);
  }
  return byLead;
}

/**
 * Waits until the outbox has nothing left to send (health's backlog), as seen by `server`: after a kill, until the leases
 * of the killed process have ended and what they held is sent, so that a second copy would have arrived by then.
 */
async function drained(server: ServerProcess): Promise<void> {
  await until(
    'an empty outbox',
    async () => {
      const health = (await (await fetch(`${server.baseUrl}/api/v1/health`)).json()) as { webhooks?: { pending?: number } };
      return health.webhooks?.pending === 0 ? true : undefined;
    },
    LEASE_WAIT_MS,
  );
}

describe('notifications across kill -9', () => {
  let database: TestDatabase;
  afterAll(() => database?.drop());

  it(
    'every lead answered 201 before the kill gets its notification after the restart, once (a resend is the same message)',
    async () => {
      database = await freshDatabase();
      const port = await freePort();
      const first = await startServer(serviceEnv(database, port), port);
      const email = 'vendas.crash@example.com';
      let second: ServerProcess | undefined;
      try {
        await confirmedRecipient(first, await notificationsToken(first, database, secretsKey), sink, { email, mode: 'immediate' });
        // The process is killed when half the burst has its answer: the other half is in flight.
        const acknowledged = await burst([first], 'k', 80, (answered) => {
          if (answered === 40) first.child.kill('SIGKILL');
        });
        await first.exit;
        expect(acknowledged.length).toBeGreaterThanOrEqual(40);

        second = await startServer(serviceEnv(database, port), port);
        // On PostgreSQL a delivery the killed process had leased waits for its lease to end (the e-mail channel's 60 s
        // attempt timeout and the worker's margin): another instance may still be sending it.
        await until(
          'a notification of every acknowledged lead',
          () => (acknowledged.every((i) => notificationsOf('k', email).has(i)) ? true : undefined),
          LEASE_WAIT_MS,
        );
        await drained(second);
        const notified = notificationsOf('k', email);
        for (const i of acknowledged) expect([i, notified.get(i)!.ids.size]).toEqual([i, 1]);
        // A lead whose request died with the process may or may not have been stored; if it was, it is told once too.
        for (const [i, entry] of notified) expect([i, entry.ids.size]).toEqual([i, 1]);
      } finally {
        await first.stop('SIGKILL');
        await second?.stop();
      }
    },
    LEASE_WAIT_MS + 60_000,
  );
});

describeIf(['postgres'])('two instances on one PostgreSQL', () => {
  let database: TestDatabase;
  afterAll(() => database?.drop());

  it('send each notification once', async () => {
    database = await freshDatabase('postgres');
    const [portA, portB] = [await freePort(), await freePort()];
    // One PUBLIC_BASE_URL for both, as behind one load balancer.
    const a = await startServer(serviceEnv(database, portA), portA);
    const b = await startServer(serviceEnv(database, portA), portB);
    const email = 'vendas.pair@example.com';
    try {
      await confirmedRecipient(a, await notificationsToken(a, database, secretsKey), sink, { email, mode: 'immediate' });
      const acknowledged = await burst([a, b], 'p', 60);
      expect(acknowledged).toHaveLength(60);
      await until('a notification of every lead', () => (notificationsOf('p', email).size === 60 ? true : undefined));
      await drained(a);
      await drained(b);
      const notified = notificationsOf('p', email);
      for (const i of acknowledged) expect([i, notified.get(i)!.copies]).toEqual([i, 1]);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
