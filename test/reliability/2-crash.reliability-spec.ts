import { freshDatabase, TestDatabase } from '../support/database.js';
import { freePort, GENEROUS_LIMITS, startServer } from '../support/server-process.js';
import { HttpClient } from './support/http-client.js';
import { LeadLedger } from './support/leads.js';
import { runLoad, sleep, Teardown } from './support/load.js';
import { seconds } from './support/mode.js';
import { logSummary, report } from './support/report.js';
import { DATABASES } from './support/services.js';

const CLIENTS = 50;
const CRASHES = 5;
/** Each kill comes at a random moment in this range after the load starts. */
const KILL_AFTER_MS = [seconds(0.5, 1), seconds(2.5, 6)];
/** Replays of acknowledged keys checked at the end: enough to catch a lost idempotency record, few enough to be quick. */
const REPLAYS = 200;

/** SQLite's own consistency check of the file as the killed process left it (read-only: the check repairs nothing). */
async function integrity(database: TestDatabase): Promise<string> {
  const rows = await database.query<{ integrity_check: string }>('PRAGMA integrity_check');
  return rows.map((row) => row.integrity_check).join('; ');
}

describe(`scenario 2: kill -9 at random moments under load, ${CRASHES} times`, () => {
  const teardown = new Teardown();
  afterEach(() => teardown.run());

  it.each(DATABASES)(
    'on %s: the database opens cleanly after every crash and nothing acknowledged is lost',
    async (kind) => {
      const database = teardown.add(await freshDatabase(kind), (db) => db.drop());
      const port = await freePort();
      const env = { ...GENEROUS_LIMITS, ...database.env, LOG_LEVEL: 'warn' };
      const client = teardown.add(new HttpClient(`http://127.0.0.1:${port}`, { sockets: CLIENTS }), (c) => c.close());
      const ledger = new LeadLedger();
      const integrityChecks: string[] = [];
      const retried = { sent: 0, answered: 0, inProgress: 0 };
      let keys = 0;
      const logs: string[] = [];

      for (let crash = 1; crash <= CRASHES + 1; crash++) {
        // startServer waits for health 200: the database opened, migrations ran, the service answers.
        const server = teardown.add(await startServer(env, port), (s) => s.stop('SIGKILL'));
        // A client that got no answer retries with its key; the crash may have come between the key and the lead.
        for (const key of [...ledger.unansweredKeys]) {
          const reply = await ledger.post(client, { key });
          retried.sent++;
          if (reply.status === 201) retried.answered++;
          // The dead request's reservation holds the key until its lease ends, and nothing was stored for it.
          else if (reply.status === 409) retried.inProgress++;
        }
        if (crash > CRASHES) {
          await checkAcknowledgedReplays(client, ledger);
          logs.push(logSummary(server.output()));
          await server.stop('SIGTERM');
          break;
        }
        const loadEnds = new AbortController();
        // Half the leads carry an Idempotency-Key, so that the idempotency records are crashed too.
        const load = runLoad(CLIENTS, { signal: loadEnds.signal }, (worker) =>
          ledger.post(client, worker % 2 ? { key: `crash-${process.pid}-${++keys}` } : {}),
        );
        await sleep(KILL_AFTER_MS[0] + Math.random() * (KILL_AFTER_MS[1] - KILL_AFTER_MS[0]));
        // No new requests from here; the ones in flight are cut by the kill.
        loadEnds.abort();
        await server.stop('SIGKILL');
        await load;
        logs.push(logSummary(server.output()));
        if (kind === 'sqlite') integrityChecks.push(await integrity(database));
      }

      const { stored, missing } = await ledger.verify(database);
      const duplicates = await database.query<{ mensagem: string }>(
        "SELECT mensagem FROM leads WHERE mensagem LIKE 'crash-%' GROUP BY mensagem HAVING COUNT(*) > 1",
      );
      report(`2. kill -9 under load on ${kind}`, [
        `${CRASHES} kills, ${CLIENTS} clients: ${client.tally.summary()}`,
        `leads: ${ledger.acknowledged.size} acknowledged with 201, ${stored} rows stored, ${missing.length} missing; ` +
          `${ledger.unanswered + retried.sent} requests cut by a kill (${retried.sent} retried with their key: ${retried.answered} answered 201, ${retried.inProgress} 409 still reserved)`,
        `integrity_check after each kill: ${kind === 'sqlite' ? integrityChecks.join(', ') : 'n/a (PostgreSQL)'}`,
        `server logs: ${[...new Set(logs)].join(' | ')}`,
      ]);

      expect(client.tally.serverErrors).toBe(0);
      // Besides 201, only no answer at all (the process was dead) and the 409 of a retried key are expected.
      expect(client.tally.others([201, 409, 'ECONNRESET', 'ECONNREFUSED', 'EPIPE'])).toEqual({});
      expect(integrityChecks).toEqual(kind === 'sqlite' ? Array(CRASHES).fill('ok') : []);
      expect(missing).toEqual([]);
      expect(ledger.mismatches).toEqual([]);
      expect(duplicates).toEqual([]);
    },
    CRASHES * (KILL_AFTER_MS[1] + 30_000) + 60_000,
  );
});

/** Acknowledged keys, replayed after the last restart, still answer their first id (the ledger records any other). */
async function checkAcknowledgedReplays(client: HttpClient, ledger: LeadLedger): Promise<void> {
  const keys = [...ledger.keyed.keys()].sort(() => Math.random() - 0.5).slice(0, REPLAYS);
  for (const key of keys) {
    const reply = await ledger.post(client, { key });
    if (reply.status !== 201) ledger.mismatches.push(`${key}: replay answered ${reply.status || reply.error}`);
  }
}
