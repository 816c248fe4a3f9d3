import { freshDatabase } from '../support/database.js';
import { GENEROUS_LIMITS, startServer } from '../support/server-process.js';
import { HttpClient } from './support/http-client.js';
import { runLoad, Teardown } from './support/load.js';
import { MixedTraffic } from './support/mixed-traffic.js';
import { seconds } from './support/mode.js';
import { logSummary, report } from './support/report.js';
import { DATABASES } from './support/services.js';

const CLIENTS = 100;
const DURATION_MS = seconds(15, 60);

describe(`scenario 1: mixed traffic from ${CLIENTS} concurrent clients`, () => {
  const teardown = new Teardown();
  afterEach(() => teardown.run());

  it.each(DATABASES)(
    'on %s: no 5xx, every kind of request answered as it should be, every 201 stored',
    async (kind) => {
      const database = teardown.add(await freshDatabase(kind), (db) => db.drop());
      const server = teardown.add(await startServer({ ...GENEROUS_LIMITS, ...database.env, LOG_LEVEL: 'warn' }), (s) => s.stop('SIGKILL'));
      const client = teardown.add(new HttpClient(server.baseUrl, { sockets: CLIENTS }), (c) => c.close());
      const traffic = new MixedTraffic(client);
      await traffic.prepare(5);

      const elapsed = await runLoad(CLIENTS, { durationMs: DURATION_MS }, () => traffic.step());
      const [code, signal] = await server.stop('SIGTERM');
      const { stored, missing } = await traffic.ledger.verify(database);
      const { ledger, unexpected } = traffic;
      report(`1. Mixed traffic on ${kind}`, [
        `${CLIENTS} clients for ${Math.round(elapsed / 1000)} s: ${client.tally.summary(elapsed)}`,
        `leads: ${ledger.acknowledged.size} acknowledged with 201, ${stored} rows stored, ${missing.length} missing`,
        `unexpected answers: ${[...unexpected].map(([what, { count }]) => `${what} ×${count}`).join(', ') || 'none'}`,
        `server log: ${logSummary(server.output())}`,
      ]);

      expect(client.tally.serverErrors).toBe(0);
      expect(Object.fromEntries(unexpected)).toEqual({});
      expect(ledger.mismatches).toEqual([]);
      expect(missing).toEqual([]);
      // Every lead request was answered, so the table holds exactly what was acknowledged: no row behind a refusal.
      expect(ledger.unanswered + ledger.unansweredKeys.size).toBe(0);
      expect(stored).toBe(ledger.acknowledged.size);
      expect(code === 0 || signal === 'SIGTERM').toBe(true);
    },
    DURATION_MS + 60_000,
  );
});
