/** @database agent registrations: the erasure's address index, the purge of expired registrations */
import { expectContract } from './support/contract.js';
import { operatorToken } from './support/operator-token.js';
import { freshDatabase, ON_POSTGRES, startTestApp, TestApp, TestDatabase } from './support/test-app.js';
import { RegistrationPurge, PURGE_BATCH } from '../src/identity/registration-purge.service.js';
import { takeRegistrationsNaming } from '../src/identity/registration-addresses.js';

/**
 * Agent registrations are found by address through an index when a person is erased, and purged once their claim
 * token, identity assertions and refresh tokens have all expired (docs/decisions/0032-agent-registration-addresses-and-purge.md).
 */

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const sql = (text: string) => (ON_POSTGRES ? text : text.replace(/\$\d+/g, '?'));
const p = (n: number) => (ON_POSTGRES ? `$${n}` : '?');

/** `count` registrations expired long ago (or expiring at `expiresAt`), by SQL, each naming `seed.<i>@exemplo.com`. */
async function seed(t: TestApp, count: number, prefix: string, expiresAt = '2020-01-01 00:00:00.000'): Promise<void> {
  await t.dataSource.query(`
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})
    INSERT INTO agent_registrations (id, type, contacts, scopes, claim_token_hash, claim_token_expires_at, created_at, expires_at)
      SELECT '${prefix}' || i, 'anonymous', '["seed.' || i || '@exemplo.com"]', 'leads:write', 'h', '2020-01-01 00:00:00.000', '2020-01-01 00:00:00.000', '${expiresAt}'
      FROM n`);
  await t.dataSource.query(`
    INSERT INTO agent_registration_addresses (registration_id, email_folded)
      SELECT id, 'seed.' || substr(id, ${prefix.length + 1}) || '@exemplo.com' FROM agent_registrations WHERE id LIKE '${prefix}%'`);
}

const count = async (t: TestApp, table: string, where = '1 = 1', params: unknown[] = []) =>
  Number(((await t.dataSource.query(sql(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`), params)) as { n: unknown }[])[0].n);

describe('agent registrations', () => {
  let database: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    database = await freshDatabase();
    t = await startTestApp({}, database);
  });
  afterAll(async () => {
    await t?.close();
    await database.drop();
  });

  const register = async (body: object) => {
    const res = await t.http.post('/api/v1/agent/identity').send(body).then(expectContract);
    expect(res.status).toBe(200);
    return res.body as Record<string, string>;
  };

  it('an erasure clears the address from the registrations that name it, however it was written, and from no other', async () => {
    const eraser = await operatorToken(t, 'leads:erase');
    await seed(t, 300, 'reg_other_', '2099-01-01 00:00:00.000');
    const both = await register({
      type: 'identity_assertion',
      assertion_type: 'verified_email',
      assertion: 'ΣΟΦΙΑ@Exemplo.GR',
      contacts: ['σοφια@exemplo.gr', 'equipe@exemplo.gr'],
    });
    const contact = await register({ type: 'anonymous', contacts: ['Σοφια@exemplo.gr'] });
    const other = await register({ type: 'anonymous', contacts: ['sofia@exemplo.gr'] });
    const res = await t.http
      .post('/api/v1/data-subject-requests/erasure')
      .set('Authorization', `Bearer ${eraser}`)
      .send({ email: 'σοφια@EXEMPLO.gr' })
      .then(expectContract);
    expect(res.status).toBe(200);
    expect(res.body.counts.agent_registrations).toBe(2);
    const rows = (await t.dataSource.query(sql('SELECT id, contacts, email FROM agent_registrations WHERE id IN ($1, $2, $3) ORDER BY id'), [
      both.registration_id,
      contact.registration_id,
      other.registration_id,
    ])) as Record<string, string | null>[];
    expect(Object.fromEntries(rows.map((row) => [row.id, [row.contacts, row.email]]))).toEqual({
      [both.registration_id]: ['["equipe@exemplo.gr"]', null],
      [contact.registration_id]: [null, null],
      [other.registration_id]: ['["sofia@exemplo.gr"]', null],
    });
    expect(await count(t, 'agent_registration_addresses', `email_folded = ${p(1)}`, ['σοφια@exemplo.gr'])).toBe(0);
    expect(await count(t, 'agent_registration_addresses', `registration_id = ${p(1)}`, [both.registration_id])).toBe(1);
  });

  it("finds an address's registrations through the address index", async () => {
    const [statement, params] = takeRegistrationsNaming('seed.7@exemplo.com', p).next().value as [string, unknown[]];
    if (!ON_POSTGRES) {
      const plan = ((await t.dataSource.query(`EXPLAIN QUERY PLAN ${statement}`, params)) as { detail: string }[]).map((row) => row.detail).join('\n');
      expect(plan).toMatch(/SEARCH a USING (COVERING )?INDEX agent_registration_addresses_email_idx \(email_folded=\?\)/);
      expect(plan).toMatch(/SEARCH r USING INDEX sqlite_autoindex_agent_registrations_1 \(id=\?\)/);
      expect(plan).not.toMatch(/SCAN/);
      return;
    }
    // A few hundred rows make a sequential scan the cheaper plan; with it off, the plan shows what the indexes can do.
    const plan = await t.dataSource.transaction(async (manager) => {
      await manager.query('SET LOCAL enable_seqscan = off');
      return ((await manager.query(`EXPLAIN ${statement}`, params)) as { 'QUERY PLAN': string }[]).map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/Index (Only )?Scan using agent_registration_addresses_email_idx/);
    expect(plan).toMatch(/Index Cond: \(\(?email_folded\)?(::text)? = /);
    expect(plan).not.toMatch(/Seq Scan/);
  });

  it('purges a registration once its claim token, assertions and refresh tokens have all expired, and no sooner; its leads keep its id', async () => {
    const purge = t.app.get(RegistrationPurge);
    await purge.run(new Date());
    const first = await register({ type: 'anonymous', contacts: ['ana@exemplo.com'] });
    const token = await t.http.post('/oauth2/token').type('form').send({ grant_type: JWT_BEARER, assertion: first.identity_assertion }).then(expectContract);
    const lead = await t.http
      .post('/api/v1/lead')
      .set('Authorization', `Bearer ${token.body.access_token}`)
      .send({ nome: 'Ana', email: 'ana@exemplo.com' })
      .then(expectContract);
    expect(lead.status).toBe(201);
    const second = await register({ type: 'identity_assertion', assertion_type: 'verified_email', assertion: 'bia@exemplo.com' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const refreshed = await t.http.post('/api/v1/agent/identity').send({ type: 'refresh', refresh_token: second.refresh_token }).then(expectContract);
    expect(refreshed.status).toBe(200);

    // With the default 30-day refresh tokens, the last thing a registration was given to expire is its refresh token.
    const firstEnds = Date.parse(first.refresh_token_expires);
    const secondEnds = Date.parse(refreshed.body.refresh_token_expires);
    expect(firstEnds).toBeGreaterThan(Date.parse(first.claim_token_expires));
    expect(secondEnds).toBeGreaterThan(firstEnds + 1);
    const exists = async (registration: Record<string, string>) =>
      (await count(t, 'agent_registrations', `id = ${p(1)}`, [registration.registration_id])) === 1;
    // The earlier tests' registrations expired before these two: a purge as of then takes them.
    await purge.run(new Date(firstEnds - 1));
    expect([await exists(first), await exists(second)]).toEqual([true, true]);
    expect(await purge.run(new Date(firstEnds + 1))).toBe(1);
    expect([await exists(first), await exists(second)]).toEqual([false, true]);
    expect(await count(t, 'agent_refresh_tokens', `registration_id = ${p(1)}`, [first.registration_id])).toBe(0);
    expect(await count(t, 'agent_registration_addresses', `registration_id = ${p(1)}`, [first.registration_id])).toBe(0);
    const reader = await operatorToken(t, 'leads:read');
    const stored = await t.http.get(`/api/v1/leads/${lead.body.id}`).set('Authorization', `Bearer ${reader}`).then(expectContract);
    expect([stored.status, stored.body.registration_id]).toEqual([200, first.registration_id]);

    // The refreshed one lives on: its refresh token still works, and it goes when that token would have expired.
    const again = await t.http.post('/api/v1/agent/identity').send({ type: 'refresh', refresh_token: refreshed.body.refresh_token }).then(expectContract);
    expect(again.status).toBe(200);
    expect(await purge.run(new Date(secondEnds + 1))).toBe(0);
    expect(await purge.run(new Date(Date.parse(again.body.refresh_token_expires) + 1))).toBe(1);
    expect(await exists(second)).toBe(false);
  });

  it('purges in batches on two instances at once, each registration once, and keeps the live ones', async () => {
    const expired = 3 * PURGE_BATCH + 17;
    await seed(t, expired, 'reg_old_');
    const live = await count(t, 'agent_registrations', `expires_at >= ${p(1)}`, [
      ON_POSTGRES ? new Date() : new Date().toISOString().replace('T', ' ').replace('Z', ''),
    ]);
    const second = await startTestApp({}, database);
    try {
      const purged = await Promise.all([t.app.get(RegistrationPurge).run(), second.app.get(RegistrationPurge).run()]);
      expect(purged[0] + purged[1]).toBe(expired);
    } finally {
      await second.close();
    }
    expect(await count(t, 'agent_registrations', `id LIKE 'reg_old_%'`)).toBe(0);
    expect(await count(t, 'agent_registration_addresses', `registration_id LIKE 'reg_old_%'`)).toBe(0);
    expect(await count(t, 'agent_registrations')).toBe(live);
  });
});
