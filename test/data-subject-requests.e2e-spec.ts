/** @database erasure, retention, two instances erasing at once */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getRepositoryToken } from '@nestjs/typeorm';
import Database from 'better-sqlite3';
import type { Response } from 'supertest';
import type { Repository } from 'typeorm';
import { LeadEraser, NIL_UUID } from '../src/data-subject/lead-eraser.service.js';
import { LeadRetention } from '../src/data-subject/lead-retention.service.js';
import { uuidv7 } from '../src/database/uuid-v7.js';
import { ConsentText } from '../src/leads/consent-text.entity.js';
import { IdempotencyKey } from '../src/leads/idempotency-key.entity.js';
import { erasedKey, legacyErasedKey } from '../src/leads/idempotency.service.js';
import { Lead } from '../src/leads/lead.entity.js';
import { SecretBox } from '../src/secrets/secret-box.js';
import { expectContract } from './support/contract.js';
import { expectProblem } from './support/problem.js';
import { operatorToken } from './support/operator-token.js';
import { storedLead } from './support/stored-leads.js';
import { countLeads, freshDatabase, ON_POSTGRES, startTestApp, TestApp, type TestDatabase } from './support/test-app.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { itIf } from './support/skips.js';

/**
 * Data-subject requests and retention (docs/decisions/0029-data-subject-requests.md): access, erasure and revocation of
 * consent, their refusals, erasure proven by reading every table, a delivery under way, the idempotency 410, the audit
 * without personal data, and retention on one instance and on two at once. Every response is checked against the contract.
 */

const FAST = { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms', WEBHOOK_POLL_INTERVAL: '20ms', WEBHOOK_TIMEOUT: '2s' };
const GRANTED = [{ category: 'communications', type: 'consent', status: 'granted' }];

async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Every row of every table, as lower-cased JSON per table. */
async function everyTable(t: TestApp): Promise<Record<string, string>> {
  const tables = (
    (await t.dataSource.query(
      ON_POSTGRES
        ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
        : "SELECT name FROM sqlite_master WHERE type = 'table'",
    )) as { name: string }[]
  ).map((row) => row.name);
  const dump: Record<string, string> = {};
  for (const table of tables) dump[table] = JSON.stringify(await t.dataSource.query(`SELECT * FROM "${table}"`)).toLowerCase();
  return dump;
}

function tablesHolding(dump: Record<string, string>, needles: string[]): string[] {
  return Object.entries(dump)
    .filter(([, text]) => needles.some((needle) => text.includes(needle.toLowerCase())))
    .map(([table]) => table);
}

describe('data-subject requests', () => {
  let t: TestApp;
  let reader: string;
  let eraser: string;
  let manager: string;

  const call = (path: string, body: unknown, token: string | null) => {
    let req = t.http.post(`/api/v1/data-subject-requests/${path}`);
    if (token !== null) req = req.set('Authorization', `Bearer ${token}`);
    return req.send(body as object).then(expectContract);
  };
  const lead = async (body: Record<string, unknown>, key?: string) => {
    let req = t.http.post('/api/v1/lead');
    if (key) req = req.set('Idempotency-Key', key);
    const res = await req.send(body).then(expectContract);
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  /** A registration through the API, as an agent makes one: its addresses go into the erasure's index. */
  const register = async (body: Record<string, unknown>) => {
    const res = await t.http.post('/api/v1/agent/identity').send(body).then(expectContract);
    expect(res.status).toBe(200);
  };
  const messages = async (type: string) =>
    ((await t.dataSource.query(`SELECT payload FROM webhook_messages WHERE event_type = '${type}' ORDER BY id`)) as { payload: string }[]).map(
      (row) => JSON.parse(row.payload) as { type: string; data: Record<string, unknown> },
    );

  beforeAll(async () => {
    t = await startTestApp(FAST);
    reader = await operatorToken(t, 'leads:read');
    eraser = await operatorToken(t, 'leads:erase', 'op_privacy');
    manager = await operatorToken(t, 'webhooks:manage');
  });
  afterAll(() => t.close());

  describe('refusals', () => {
    it.each(['access', 'erasure', 'consent-revocation'])('%s: 401 without a token, 403 without its scope', async (path) => {
      const anonymous = await call(path, { email: 'a@example.com' }, null);
      expectProblem(anonymous, 401, 'authentication_required');
      const scope = path === 'access' ? 'leads:read' : 'leads:erase';
      expect(anonymous.headers['www-authenticate']).toContain(`scope="${scope}"`);
      const forbidden = await call(path, { email: 'a@example.com' }, path === 'access' ? eraser : reader);
      expectProblem(forbidden, 403, 'insufficient_scope');
    });

    it.each(['access', 'erasure', 'consent-revocation'])('%s: 422 for a bad or missing address and for unknown members, 400 for a non-object', async (path) => {
      const token = path === 'access' ? reader : eraser;
      const bad = await call(path, { email: 'not an address', nome: 'x' }, token);
      expectProblem(bad, 422, 'validation_failed');
      expect(bad.body.errors.map((e: { pointer: string; code: string }) => [e.pointer, e.code])).toEqual([
        ['/nome', 'unknown_field'],
        ['/email', 'invalid_format'],
      ]);
      expect((await call(path, {}, token)).body.errors).toEqual([{ pointer: '/email', code: 'required', detail: expect.any(String) }]);
      expect((await call(path, { email: 42 }, token)).body.errors[0]).toMatchObject({ pointer: '/email', code: 'invalid_type' });
      expectProblem(await call(path, ['a@example.com'], token), 400, 'body_not_object');
    });
  });

  it('access returns exactly that person’s leads, case-folded, with the wordings they name, and audits it without the address', async () => {
    const wording = `Aceito comunicações (acesso ${uuidv7()}).`;
    const first = await lead({ nome: 'Acesso Um', email: 'Acesso.Pessoa@Example.com', legal_bases: GRANTED, consent_text: wording });
    const second = await lead({ nome: 'Acesso Dois', email: 'acesso.pessoa@EXAMPLE.com' });
    await lead({ nome: 'Outra Pessoa', email: 'outra.acesso@example.com' });
    const res = await call('access', { email: '  ACESSO.PESSOA@example.COM ' }, reader);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ type: 'access', lead_ids: [second, first], counts: { leads: 2, consent_texts: 1 } });
    expect(res.body.next_cursor).toBeNull();
    for (const view of res.body.data) {
      const read = await t.http.get(`/api/v1/leads/${view.id}`).set('Authorization', `Bearer ${reader}`);
      expect(view).toEqual(read.body);
    }
    expect(res.body.consent_texts).toEqual([{ sha256: res.body.data[1].legal_bases[0].consent_text_sha256, text: wording }]);
    const [audit] = await t.dataSource.query(`SELECT * FROM data_subject_requests WHERE id = '${res.body.request_id}'`);
    expect(audit).toMatchObject({ type: 'access', subject_hmac: expect.stringMatching(/^[0-9a-f]{64}$/), lead_ids: JSON.stringify([second, first]) });
    expect(JSON.stringify(audit).toLowerCase()).not.toContain('acesso.pessoa');
  });

  it('access answers in pages of 500 that follow a sealed cursor bound to the address: 1,201 leads in 500/500/201, each once', async () => {
    const wording = (n: number) => ({ sha256: createHash('sha256').update(`Aceito (página ${n})`).digest('hex'), text: `Aceito (página ${n})` });
    const [newest, oldest] = [wording(1), wording(3)];
    for (const { sha256, text } of [newest, oldest]) {
      await t.dataSource.getRepository(ConsentText).insert({ sha256, text, createdAt: Date.now() });
    }
    const basis = (sha256: string) => [
      {
        category: 'communications',
        type: 'consent',
        status: 'granted',
        recorded_at: new Date().toISOString(),
        channel: 'api',
        consent_text_sha256: sha256,
        revoked_at: null,
      },
    ];
    const start = Date.now() - 3_600_000;
    // One millisecond apart, lead 1200 the newest; a second person's leads share the milliseconds.
    const rows = Array.from({ length: 1201 }, (_, i) =>
      storedLead(i, {
        email: 'Paginas.Pessoa@example.com',
        mensagem: `mensagem ${i}`,
        receivedAt: new Date(start + i),
        legalBases: (i === 1200 ? basis(newest.sha256) : i === 0 ? basis(oldest.sha256) : null) as Lead['legalBases'],
      }),
    );
    const others = Array.from({ length: 30 }, (_, i) => storedLead(i, { email: 'outra.paginas@example.com', receivedAt: new Date(start + i) }));
    const repo = t.app.get<Repository<Lead>>(getRepositoryToken(Lead));
    for (let i = 0; i < rows.length; i += 100) await repo.insert(rows.slice(i, i + 100));
    await repo.insert(others);

    const pages: Response[] = [];
    for (let cursor: string | undefined; ;) {
      const res = await call(
        'access',
        cursor === undefined ? { email: 'paginas.pessoa@EXAMPLE.com' } : { email: 'paginas.pessoa@EXAMPLE.com', cursor },
        reader,
      );
      expect(res.status).toBe(200);
      pages.push(res);
      if (res.body.next_cursor === null) break;
      cursor = res.body.next_cursor as string;
      expect(pages.length).toBeLessThan(4);
    }
    expect(pages.map((page) => page.body.data.length)).toEqual([500, 500, 201]);
    expect(pages.map((page) => page.body.counts.leads)).toEqual([500, 500, 201]);
    const received = pages.flatMap((page) => page.body.data.map((lead: { id: string }) => lead.id));
    expect(received).toEqual([...rows].reverse().map((row) => row.id));
    // Only the wordings the page's own leads name.
    expect(pages.map((page) => page.body.consent_texts)).toEqual([[newest], [], [oldest]]);
    // One audit row per page, with the ids of that page.
    const audits = (await t.dataSource.query(
      `SELECT lead_ids FROM data_subject_requests WHERE id IN (${pages.map((page) => `'${page.body.request_id}'`).join(', ')}) ORDER BY id`,
    )) as { lead_ids: string }[];
    expect(audits.map((row) => (JSON.parse(row.lead_ids) as string[]).length)).toEqual([500, 500, 201]);

    const cursor = pages[0].body.next_cursor as string;
    // The second person cannot be paged with the first one's cursor, nor with a list cursor, nor with an altered one.
    const other = await call('access', { email: 'outra.paginas@example.com', cursor }, reader);
    expectProblem(other, 400, 'invalid_cursor');
    const list = await t.http.get('/api/v1/leads?email=paginas.pessoa@example.com&limit=1').set('Authorization', `Bearer ${reader}`);
    expectProblem(await call('access', { email: 'paginas.pessoa@example.com', cursor: list.body.next_cursor }, reader), 400, 'invalid_cursor');
    const bytes = Buffer.from(cursor, 'base64url');
    bytes[bytes.length - 1] ^= 1;
    expectProblem(await call('access', { email: 'paginas.pessoa@example.com', cursor: bytes.toString('base64url') }, reader), 400, 'invalid_cursor');
    expectProblem(await call('access', { email: 'paginas.pessoa@example.com', cursor: 'x'.repeat(5000) }, reader), 400, 'invalid_cursor');
    const typed = await call('access', { email: 'paginas.pessoa@example.com', cursor: 7 }, reader);
    expectProblem(typed, 422, 'validation_failed');
    expect(typed.body.errors).toEqual([{ pointer: '/cursor', code: 'invalid_type', detail: expect.any(String) }]);
    // The same cursor, with the address in another letter case, is the same page again.
    const again = await call('access', { email: 'PAGINAS.pessoa@example.com', cursor }, reader);
    expect(again.body.data).toEqual(pages[1].body.data);
  });

  it('erasure removes the person from every table, keeps everyone else, cancels a pending delivery and tells receivers', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      // The receiver echoes what it got, so the attempt log holds the person's data until the erasure. Its Retry-After
      // keeps the retry pending past the erasure whatever the machine's speed (a retry already on the wire cannot be
      // recalled; lead.erased follows it).
      receiver.planned.push({ status: 503, headers: { 'retry-after': '120' }, body: 'got Zuleica Quixadá zuleica.q@example.org' });
      // As /docs/webhooks sets one up: lead.received only. Having had the leads, it is told of their erasure all the same.
      const endpoint = await t.http
        .post('/api/v1/webhooks')
        .set('Authorization', `Bearer ${manager}`)
        .send({ url: receiver.url, events: ['lead.received'] })
        .then(expectContract);
      expect(endpoint.body.events).toEqual(['lead.received']);
      const shared = `Aceito comunicações (compartilhado ${uuidv7()}).`;
      // A wording that quotes her: it goes with her leads (no other lead names it).
      const own = `Eu, Zuleica Quixadá, aceito comunicações (${uuidv7()}).`;
      const person = { nome: 'Zuleica Quixadá', telefone: '+55 (11) 97777-1234', legal_bases: GRANTED };
      const ids = [
        await lead({ ...person, email: 'Zuleica.Q@Example.org', consent_text: own }, 'dsr-key-1'),
        await lead({ ...person, email: 'zuleica.q@example.org', consent_text: shared }),
      ];
      const other = await lead({ nome: 'Bento Ramalho', email: 'bento.r@example.org', legal_bases: GRANTED, consent_text: shared });
      await register({
        type: 'identity_assertion',
        assertion_type: 'verified_email',
        assertion: 'zuleica.q@EXAMPLE.org',
        client_name: 'Assistente da Zuleica',
        contacts: ['ZULEICA.Q@example.org', 'ops@example.net'],
      });
      // Three lead.received requests: the failed first one of the first lead, and the others; the first stays pending.
      await receiver.waitFor(3);
      await eventually(async () => ((await t.dataSource.query('SELECT 1 FROM webhook_attempts')) as unknown[]).length >= 3 || undefined);
      const needles = ['zuleica', 'quixad', '97777-1234', '5511977771234', own];
      expect(tablesHolding(await everyTable(t), needles).sort()).toEqual(
        expect.arrayContaining(['agent_registrations', 'consent_texts', 'leads', 'webhook_attempts', 'webhook_messages']),
      );

      const [{ scope }] = (await t.dataSource.query("SELECT scope FROM idempotency_keys WHERE key = 'dsr-key-1'")) as { scope: string }[];
      const erasedAt = Date.now();
      const res = await call('erasure', { email: 'ZULEICA.Q@example.org' }, eraser);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({
        request_id: expect.any(String),
        type: 'erasure',
        requested_at: expect.any(String),
        completed_at: expect.any(String),
        lead_ids: expect.arrayContaining(ids),
        counts: {
          leads: 2,
          webhook_messages: 2,
          webhook_deliveries: 2,
          webhook_attempts: 2,
          consent_texts: 1,
          idempotency_keys: 1,
          agent_registrations: 1,
        },
        dry_run: false,
        ids_truncated: false,
        // PostgreSQL does not overwrite what it deletes: never scrubbed (/docs/privacy).
        scrubbed: !ON_POSTGRES,
        endpoints_notified: 1,
      });
      expect(res.body.lead_ids).toHaveLength(2);

      // Receivers learn of it; the pending delivery is never attempted again.
      const erased = await eventually(async () => receiver.received.find((r) => JSON.parse(r.body).type === 'lead.erased'));
      expect(JSON.parse(erased.body).data).toEqual({ lead_ids: expect.arrayContaining(ids), reason: 'data_subject_request' });
      await new Promise((resolve) => setTimeout(resolve, 800));
      const after = receiver.received.filter((r) => r.at >= erasedAt && JSON.parse(r.body).type === 'lead.received');
      expect(after).toEqual([]);

      const dump = await everyTable(t);
      expect(tablesHolding(dump, needles)).toEqual([]);
      expect(dump.leads).toContain('bento.r@example.org');
      expect(dump.consent_texts).toContain(shared.toLowerCase());
      expect(dump.agent_registrations).toContain('ops@example.net');
      expect(dump.webhook_messages).toContain(other);

      // The retry of an erased lead's key: 410, and nothing stored.
      const leads = dump.leads;
      const retry = await t.http
        .post('/api/v1/lead')
        .set('Idempotency-Key', 'dsr-key-1')
        .send({ ...person, email: 'Zuleica.Q@Example.org', consent_text: own })
        .then(expectContract);
      expectProblem(retry, 410, 'lead_erased');
      expect(JSON.stringify(await t.dataSource.query('SELECT * FROM leads')).toLowerCase()).toBe(leads);
      // The key is kept only as a hash of the caller's scope (here an address) and the key text.
      const keys = (await t.dataSource.query('SELECT * FROM idempotency_keys')) as Record<string, unknown>[];
      expect(JSON.stringify(keys)).not.toMatch(/dsr-key-1|127\.0\.0\.1|ip:/);
      expect(keys).toEqual([
        expect.objectContaining({
          scope: 'erased',
          key: expect.stringMatching(/^[0-9a-f]{64}$/),
          fingerprint: '',
          lead_id: '00000000-0000-0000-0000-000000000000',
          response_body: null,
        }),
      ]);
      expect(Boolean(keys[0].erased)).toBe(true);
      // An HMAC under the service's key, not a hash anyone could compute from a guessed key and address.
      expect(keys[0].key).toBe(erasedKey(t.app.get(SecretBox), scope, 'dsr-key-1'));
      expect(keys[0].key).not.toBe(legacyErasedKey(scope, 'dsr-key-1'));
      const [registration] = await t.dataSource.query("SELECT client_name, contacts FROM agent_registrations WHERE contacts LIKE '%ops@example.net%'");
      expect(registration).toEqual({ client_name: null, contacts: JSON.stringify(['ops@example.net']) });

      const [audit] = await t.dataSource.query(`SELECT * FROM data_subject_requests WHERE id = '${res.body.request_id}'`);
      expect(audit).toMatchObject({ type: 'erasure', client_id: 'op_privacy' });
      expect(JSON.parse(audit.lead_ids)).toEqual(res.body.lead_ids);

      // Again: nothing left, and the answer says so.
      const again = await call('erasure', { email: 'zuleica.q@example.org' }, eraser);
      expect(again.body).toMatchObject({ lead_ids: [], counts: { leads: 0, agent_registrations: 0 } });
    } finally {
      await t.http
        .delete(`/api/v1/webhooks/${(await t.http.get('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`)).body.data[0]?.id}`)
        .set('Authorization', `Bearer ${manager}`);
      await receiver.close();
    }
  });

  it('erasure with dry_run answers what it would erase, erases nothing, and is audited as a dry run', async () => {
    const wording = `Aceito comunicações (prévia ${uuidv7()}).`;
    const ids = [
      await lead({ nome: 'Prévia Um', email: 'Previa.Pessoa@Example.net', legal_bases: GRANTED, consent_text: wording }, 'dsr-dry-1'),
      await lead({ nome: 'Prévia Dois', email: 'previa.pessoa@example.net' }),
    ];
    await register({ type: 'anonymous', client_name: 'agente prévia', contacts: ['PREVIA.PESSOA@example.net'] });
    // The worker's fan-out marks each message; once it has, nothing but a request changes these tables.
    await eventually(
      async () => ((await t.dataSource.query('SELECT 1 FROM webhook_messages WHERE dispatched_at IS NULL')) as unknown[]).length === 0 || undefined,
    );
    const before = await everyTable(t);

    const dry = await call('erasure', { email: 'previa.pessoa@EXAMPLE.net', dry_run: true }, eraser);
    expect(dry.status).toBe(200);
    expect(dry.headers['cache-control']).toBe('no-store');
    // On SQLite a lead stored while no webhook endpoint exists gets no outbox message (decision 0027).
    const counts = {
      leads: 2,
      webhook_messages: ON_POSTGRES ? 2 : 0,
      webhook_deliveries: 0,
      webhook_attempts: 0,
      consent_texts: 1,
      idempotency_keys: 1,
      agent_registrations: 1,
    };
    expect(dry.body).toEqual({
      request_id: expect.any(String),
      type: 'erasure',
      requested_at: expect.any(String),
      completed_at: expect.any(String),
      lead_ids: expect.arrayContaining(ids),
      counts,
      dry_run: true,
      ids_truncated: false,
      // No endpoint exists: nobody would be told.
      endpoints_notified: 0,
    });
    expect(dry.body.lead_ids).toHaveLength(2);

    // Nothing changed but the audit, which records a dry run, not an erasure.
    const after = await everyTable(t);
    for (const table of Object.keys(before).filter((name) => name !== 'data_subject_requests')) expect([table, after[table]]).toEqual([table, before[table]]);
    for (const id of ids) expect((await t.http.get(`/api/v1/leads/${id}`).set('Authorization', `Bearer ${reader}`).then(expectContract)).status).toBe(200);
    expect(await messages('lead.erased')).not.toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ lead_ids: expect.arrayContaining(ids) }) }),
    );
    const [audit] = await t.dataSource.query(`SELECT * FROM data_subject_requests WHERE id = '${dry.body.request_id}'`);
    expect(audit).toMatchObject({ type: 'erasure_dry_run', client_id: 'op_privacy' });

    // The erasure that follows removes exactly what the dry run counted.
    const erased = await call('erasure', { email: 'previa.pessoa@example.net', dry_run: false }, eraser);
    expect(erased.body).toMatchObject({ type: 'erasure', counts, dry_run: false, endpoints_notified: 0 });
    expect([...erased.body.lead_ids].sort()).toEqual([...dry.body.lead_ids].sort());
  });

  it('a dry run over several batches answers exactly what the erasure then answers: the same ids in the same order, the same counts', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      // A receiver that fails the first tries: attempts logged, deliveries left pending.
      receiver.planned.push(...Array.from({ length: 40 }, () => ({ status: 500, body: 'não' })));
      const endpoint = await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: receiver.url }).then(expectContract);
      expect(endpoint.status).toBe(201);
      const run = uuidv7();
      const email = `Lotes.${run}@Example.com`;
      // Her own wording, named by leads in the first and the last batch; one she shares with someone who stays.
      const own = `Eu aceito (lotes ${uuidv7()}).`;
      const shared = `Aceito comunicações (lotes compartilhado ${uuidv7()}).`;
      for (let i = 0; i < 230; i++) {
        const consent = i === 0 || i === 229 ? { legal_bases: GRANTED, consent_text: own } : i === 100 ? { legal_bases: GRANTED, consent_text: shared } : {};
        await lead({ nome: `Lotes ${i}`, email, ...consent }, i % 3 === 0 ? `lotes-${run}-${i}` : undefined);
      }
      await lead({ nome: 'Fica', email: `fica.${uuidv7()}@example.com`, legal_bases: GRANTED, consent_text: shared });
      await register({ type: 'anonymous', client_name: 'agente dos lotes', contacts: [email.toUpperCase(), 'outro@example.net'] });
      await receiver.waitFor(40, 30_000);
      // Nothing changes under the two requests once every message is fanned out and every delivery done.
      await eventually(
        async () =>
          (
            (await t.dataSource.query(
              "SELECT 1 FROM webhook_messages WHERE dispatched_at IS NULL UNION ALL SELECT 1 FROM webhook_deliveries WHERE state = 'pending'",
            )) as unknown[]
          ).length === 0 || undefined,
        30_000,
      );

      const dry = await call('erasure', { email, dry_run: true }, eraser);
      const erased = await call('erasure', { email }, eraser);
      expect(erased.body.counts).toMatchObject({ leads: 230, consent_texts: 1, idempotency_keys: 77, agent_registrations: 1 });
      expect(erased.body.counts.webhook_messages).toBeGreaterThan(0);
      expect(erased.body.counts.webhook_attempts).toBeGreaterThan(0);
      expect(dry.body.counts).toEqual(erased.body.counts);
      expect(dry.body.lead_ids).toEqual(erased.body.lead_ids);
    } finally {
      await t.http
        .delete(`/api/v1/webhooks/${(await t.http.get('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`)).body.data[0]?.id}`)
        .set('Authorization', `Bearer ${manager}`);
      await receiver.close();
    }
  });

  it('a dry run frees the event loop between its batches', async () => {
    const email = `turnos.${uuidv7()}@example.com`;
    const rows = Array.from({ length: 450 }, (_, i) => storedLead(i, { email, receivedAt: new Date(Date.now() - i) }));
    await t.app.get<Repository<Lead>>(getRepositoryToken(Lead)).insert(rows);
    // Turns of the event loop that come while the dry run is under way: one at least between each two of its 5 batches.
    let turns = 0;
    let running = true;
    const tick = () => {
      if (!running) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const dry = t.app.get(LeadEraser).dryRun(email);
    const result = await dry.finally(() => (running = false));
    expect(result.counts.leads).toBe(450);
    expect(turns).toBeGreaterThanOrEqual(4);
  });

  it('keyed intake takes a key in one statement (the erased mark looked for inside it); a mark an earlier version hashed still answers 410', async () => {
    const statements: string[] = [];
    const spy = jest.spyOn(t.dataSource.logger, 'logQuery').mockImplementation((query: string) => void statements.push(query));
    try {
      await lead({ nome: 'Chave Nova', email: 'chave.nova@example.com' }, 'chave-nova-1');
    } finally {
      spy.mockRestore();
    }
    // The reservation and the recorded answer: no lookup of its own before them.
    expect(statements.filter((sql) => sql.includes('idempotency_keys')).map((sql) => sql.trim().split(/\s/)[0].toUpperCase())).toEqual(['INSERT', 'UPDATE']);

    // A mark written before erased keys were an HMAC: a plain SHA-256 of scope and key, kept for its 24 hours.
    const [{ scope }] = (await t.dataSource.query("SELECT scope FROM idempotency_keys WHERE key = 'chave-nova-1'")) as { scope: string }[];
    await t.dataSource.getRepository(IdempotencyKey).insert({
      scope: 'erased',
      key: legacyErasedKey(scope, 'chave-antiga-1'),
      fingerprint: '',
      leadId: NIL_UUID,
      state: 'done',
      erased: true,
      responseBody: null,
      createdAt: new Date(),
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    const leadsBefore = await countLeads(t.dataSource);
    const retry = await t.http
      .post('/api/v1/lead')
      .set('Idempotency-Key', 'chave-antiga-1')
      .send({ nome: 'Chave Antiga', email: 'chave.antiga@example.com' })
      .then(expectContract);
    expectProblem(retry, 410, 'lead_erased');
    expect(await countLeads(t.dataSource)).toBe(leadsBefore);
    // Another caller's same key is not refused: the mark is of that scope and key.
    const other = await t.http
      .post('/api/v1/lead')
      .set('Idempotency-Key', 'chave-antiga-1')
      .set('Authorization', `Bearer ${await operatorToken(t, 'leads:write')}`)
      .send({ nome: 'Chave Antiga', email: 'chave.antiga@example.com' })
      .then(expectContract);
    expect(other.status).toBe(201);
  });

  it('an erasure of more than 1,000 leads lists the first 1,000 ids and says so; the audit keeps every id in one row', async () => {
    const email = `muitos.${uuidv7()}@example.com`;
    const rows = Array.from({ length: 1_050 }, (_, i) => storedLead(i, { email, receivedAt: new Date(Date.now() - i) }));
    const repo = t.app.get<Repository<Lead>>(getRepositoryToken(Lead));
    for (let start = 0; start < rows.length; start += 50) await repo.insert(rows.slice(start, start + 50));
    const all = rows.map((row) => row.id).sort();

    const dry = await call('erasure', { email, dry_run: true }, eraser);
    expect(dry.body).toMatchObject({ dry_run: true, ids_truncated: true, counts: { leads: 1_050 } });
    expect(dry.body.lead_ids).toHaveLength(1_000);

    const res = await call('erasure', { email }, eraser);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dry_run: false, ids_truncated: true, counts: { leads: 1_050 } });
    expect(res.body.lead_ids).toHaveLength(1_000);
    expect(all).toEqual(expect.arrayContaining(res.body.lead_ids));
    const audits = await t.dataSource.query(
      `SELECT * FROM data_subject_requests WHERE requested_at = ${Date.parse(res.body.requested_at)} AND type <> 'erasure_dry_run'`,
    );
    expect(audits.map((row: { id: string; type: string }) => [row.id, row.type])).toEqual([[res.body.request_id, 'erasure']]);
    expect([...JSON.parse(audits[0].lead_ids)].sort()).toEqual(all);

    const small = await call('erasure', { email: `poucos.${uuidv7()}@example.com` }, eraser);
    expect(small.body).toMatchObject({ lead_ids: [], ids_truncated: false });
  });

  it('erasure and revocation reach every enabled endpoint that got leads, whatever its events; the answer and a dry run count them', async () => {
    // A receiver per endpoint, named after what it subscribed to.
    const receivers = new Map<string, WebhookReceiver>();
    const created: string[] = [];
    const endpoint = async (name: string, events: string[]) => {
      const receiver = await WebhookReceiver.start();
      receivers.set(name, receiver);
      const res = await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: receiver.url, events }).then(expectContract);
      expect(res.status).toBe(201);
      created.push(res.body.id as string);
      return res.body.id as string;
    };
    try {
      await endpoint('received', ['lead.received']);
      await endpoint('held', ['lead.held']);
      await endpoint('erased', ['lead.erased']);
      await endpoint('revoked', ['consent.revoked']);
      const off = await endpoint('off', ['lead.received']);
      await t.http.patch(`/api/v1/webhooks/${off}`).set('Authorization', `Bearer ${manager}`).send({ status: 'disabled' }).then(expectContract);
      const email = `jusante.${uuidv7()}@example.com`;
      const id = await lead({ nome: 'Jusante Pessoa', email, legal_bases: GRANTED });
      const nobody = await call('erasure', { email: `ninguem.${uuidv7()}@example.com`, dry_run: true }, eraser);
      expect(nobody.body).toMatchObject({ lead_ids: [], endpoints_notified: 0 });

      const revoked = await call('consent-revocation', { email }, eraser);
      expect(revoked.body.counts).toEqual({ leads: 1, revoked: 1 });
      const dry = await call('erasure', { email, dry_run: true }, eraser);
      expect(dry.body).toMatchObject({ dry_run: true, lead_ids: [id], endpoints_notified: 3 });
      const erased = await call('erasure', { email }, eraser);
      expect(erased.body).toMatchObject({ dry_run: false, lead_ids: [id], endpoints_notified: 3 });

      const told = (type: string) =>
        [...receivers]
          .filter(([, receiver]) =>
            receiver.received.some((r) => JSON.parse(r.body).type === type && (JSON.parse(r.body).data.lead_ids as string[]).includes(id)),
          )
          .map(([name]) => name)
          .sort();
      await eventually(async () => (told('lead.erased').length === 3 && told('consent.revoked').length === 3) || undefined);
      // A little longer: no other endpoint gets either.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(told('lead.erased')).toEqual(['erased', 'held', 'received']);
      expect(told('consent.revoked')).toEqual(['held', 'received', 'revoked']);
    } finally {
      for (const id of created) await t.http.delete(`/api/v1/webhooks/${id}`).set('Authorization', `Bearer ${manager}`);
      for (const receiver of receivers.values()) await receiver.close();
    }
  });

  it('dry_run must be a boolean, and only an erasure takes it', async () => {
    const bad = await call('erasure', { email: 'a@example.com', dry_run: 'yes' }, eraser);
    expectProblem(bad, 422, 'validation_failed');
    expect(bad.body.errors).toEqual([{ pointer: '/dry_run', code: 'invalid_type', detail: expect.any(String) }]);
    const access = await call('access', { email: 'a@example.com', dry_run: true }, reader);
    expectProblem(access, 422, 'validation_failed');
    expect(access.body.errors).toEqual([{ pointer: '/dry_run', code: 'unknown_field', detail: expect.any(String) }]);
  });

  it('consent revocation declines communications on every stored lead; a later lead keeps its new grant', async () => {
    const granted = await lead({
      nome: 'Renata',
      email: 'renata.r@example.com',
      legal_bases: [...GRANTED, { category: 'data_processing', type: 'legitimate_interest', status: 'granted' }],
    });
    const none = await lead({ nome: 'Renata', email: 'Renata.R@example.com' });
    const res = await call('consent-revocation', { email: 'renata.r@example.com' }, eraser);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: 'consent_revocation', category: 'communications', counts: { leads: 2, revoked: 2 } });
    const revokedAt = res.body.revoked_at as string;
    const view = async (id: string) => (await t.http.get(`/api/v1/leads/${id}`).set('Authorization', `Bearer ${reader}`)).body;
    expect((await view(granted)).legal_bases).toEqual([
      expect.objectContaining({ category: 'communications', type: 'consent', status: 'declined', revoked_at: revokedAt }),
      expect.objectContaining({ category: 'data_processing', status: 'granted', revoked_at: null }),
    ]);
    expect((await view(none)).legal_bases).toEqual([
      {
        category: 'communications',
        type: 'consent',
        status: 'declined',
        recorded_at: revokedAt,
        channel: 'data_subject_request',
        consent_text_sha256: null,
        revoked_at: revokedAt,
      },
    ]);
    const events = (await messages('consent.revoked')).filter((m) => m.data.revoked_at === revokedAt);
    expect(events).toEqual([
      {
        type: 'consent.revoked',
        timestamp: revokedAt,
        data: { lead_ids: expect.arrayContaining([granted, none]), category: 'communications', revoked_at: revokedAt },
      },
    ]);

    const later = await lead({ nome: 'Renata', email: 'renata.r@example.com', legal_bases: GRANTED });
    expect((await view(later)).legal_bases[0]).toMatchObject({ status: 'granted', revoked_at: null });
    const again = await call('consent-revocation', { email: 'renata.r@example.com' }, eraser);
    expect(again.body.counts).toEqual({ leads: 3, revoked: 1 });
  });
});

describe('erasure on disk', () => {
  const person = {
    nome: 'Iracema Quintela',
    email: 'Iracema.Quintela@Exemplo.net',
    telefone: '+55 (21) 98888-4321',
    mensagem: 'Sou Iracema Quintela e quero uma proposta.',
    legal_bases: GRANTED,
    consent_text: 'Eu, Iracema Quintela, aceito receber comunicações.',
  };
  const needles = ['iracema.quintela@exemplo.net', 'iracema quintela', 'quintela', 'disco-7', '+5521988884321', '(21) 98888-4321', '98888-4321'];
  /** The needles found in the bytes of the SQLite file and its WAL. */
  const onDisk = (t: TestApp) => {
    const files = ['leads.sqlite', 'leads.sqlite-wal']
      .map((name) => join(t.config.dataDir, name))
      .filter((file) => existsSync(file))
      .map((file) => readFileSync(file).toString('latin1').toLowerCase());
    return needles.filter((needle) => files.some((bytes) => bytes.includes(needle)));
  };
  const other = (t: TestApp, i: number) =>
    t.http
      .post('/api/v1/lead')
      .set('Idempotency-Key', `outra-${i}`)
      .send({
        nome: `Outra Pessoa ${i}`,
        email: `${(i * 7919) % 1000}.outra${i}@exemplo.net`,
        telefone: '+55 11 3333-4444',
        mensagem: `Mensagem ${i} ${'proposta '.repeat(i % 60)}`,
      });
  const erase = async (t: TestApp, leads: number) => {
    const res = await t.http
      .post('/api/v1/data-subject-requests/erasure')
      .set('Authorization', `Bearer ${await operatorToken(t, 'leads:erase')}`)
      .send({ email: person.email })
      .then(expectContract);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ counts: { leads, webhook_messages: leads, idempotency_keys: leads }, scrubbed: true });
  };
  const withWebhooks = async (t: TestApp, receiver: WebhookReceiver) => {
    const manager = await operatorToken(t, 'webhooks:manage');
    expect((await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: receiver.url })).status).toBe(201);
  };

  itIf('sqlite')('leaves none of the person in the SQLite file or its WAL, outbox and idempotency rows included', async () => {
    const t = await startTestApp(FAST);
    const receiver = await WebhookReceiver.start();
    try {
      await withWebhooks(t, receiver);
      // Hers and others', interleaved, so that her rows share pages with rows that stay.
      for (let i = 0; i < 150; i++) {
        // Each message its own: more than 5 identical leads from one address would be held, and send no webhook.
        const own = await t.http
          .post('/api/v1/lead')
          .set('Idempotency-Key', `disco-${i}`)
          .send({ ...person, mensagem: `${person.mensagem} (${i})` });
        expect(own.status).toBe(201);
        expect((await other(t, i)).status).toBe(201);
      }
      await receiver.waitFor(300, 30_000);
      expect(onDisk(t)).toEqual(needles);
      await erase(t, 150);
      expect(onDisk(t)).toEqual([]);
      expect(readFileSync(join(t.config.dataDir, 'leads.sqlite')).toString('latin1')).toContain('.outra149@exemplo.net');
    } finally {
      await receiver.close();
      await t.close();
    }
  });

  // Her leads first, then many others: the pages that held her rows were split and their roots made interior while
  // the others came in. With secure_delete on only around the erasure, her bytes stayed in the free gap of four such
  // pages (decision 0029, "What remains on disk"); it is on for the whole connection.
  itIf('sqlite')('leaves none of the person when her leads came first and thousands of others after them', async () => {
    const t = await startTestApp(FAST);
    const receiver = await WebhookReceiver.start();
    try {
      await withWebhooks(t, receiver);
      for (let i = 0; i < 20; i++) {
        const own = await t.http
          .post('/api/v1/lead')
          .set('Idempotency-Key', `disco-${i}`)
          .send({ ...person, mensagem: `${person.mensagem} (${i})` });
        expect(own.status).toBe(201);
      }
      for (let i = 0; i < 300; i++) expect((await other(t, i)).status).toBe(201);
      const rows = Array.from({ length: 3_000 }, (_, i) =>
        storedLead(i, {
          email: `${(i * 104729) % 9973}.z${i}@exemplo.org`,
          mensagem: 'y'.repeat(i % 700),
          receivedAt: new Date(Date.now() - ((i * 7919) % 100_000)),
        }),
      );
      const repo = t.app.get<Repository<Lead>>(getRepositoryToken(Lead));
      for (let start = 0; start < rows.length; start += 50) await repo.insert(rows.slice(start, start + 50));
      await receiver.waitFor(320, 30_000);
      expect(onDisk(t)).toEqual(needles);
      await erase(t, 20);
      expect(onDisk(t)).toEqual([]);
    } finally {
      await receiver.close();
      await t.close();
    }
  });
});

describe('erasure on PostgreSQL', () => {
  itIf('postgres')('answers scrubbed: false and VACUUMs the tables it touched after the answer', async () => {
    const t = await startTestApp({ WEBHOOK_WORKER: 'false' });
    try {
      const eraser = await operatorToken(t, 'leads:erase');
      expect((await t.http.post('/api/v1/lead').send({ nome: 'Vácuo', email: 'vacuo@exemplo.net' })).status).toBe(201);
      const vacuumed = async () =>
        (
          (await t.dataSource.query(
            "SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname IN ('leads', 'idempotency_keys') AND last_vacuum IS NOT NULL ORDER BY relname",
          )) as { relname: string }[]
        ).map((row) => row.relname);
      expect(await vacuumed()).toEqual([]);
      const res = await t.http
        .post('/api/v1/data-subject-requests/erasure')
        .set('Authorization', `Bearer ${eraser}`)
        .send({ email: 'vacuo@exemplo.net' })
        .then(expectContract);
      expect(res.body).toMatchObject({ counts: { leads: 1 }, scrubbed: false });
      await t.app.get(LeadEraser).vacuumed();
      expect(await eventually(async () => ((await vacuumed()).length === 2 ? vacuumed() : undefined))).toEqual(['idempotency_keys', 'leads']);
    } finally {
      await t.close();
    }
  });
});

describe('erasure with a reader on the WAL', () => {
  itIf('sqlite')('answers scrubbed: false while another connection’s reader holds the WAL, and true once it is gone', async () => {
    const t = await startTestApp({ WEBHOOK_WORKER: 'false' });
    const reader = new Database(join(t.config.dataDir, 'leads.sqlite'), { readonly: true });
    try {
      const eraser = await operatorToken(t, 'leads:erase');
      for (let i = 0; i < 3; i++) expect((await t.http.post('/api/v1/lead').send({ nome: 'Leitor', email: 'leitor@exemplo.net' })).status).toBe(201);
      // A read transaction started before the erasure: the checkpoint cannot take the WAL frames after its snapshot.
      reader.exec('BEGIN');
      reader.prepare('SELECT COUNT(*) FROM leads').get();
      const erase = () =>
        t.http
          .post('/api/v1/data-subject-requests/erasure')
          .set('Authorization', `Bearer ${eraser}`)
          .send({ email: 'leitor@exemplo.net' })
          .then(expectContract);
      const held = await erase();
      expect(held.body).toMatchObject({ counts: { leads: 3 }, scrubbed: false });
      reader.exec('COMMIT');
      expect((await erase()).body).toMatchObject({ counts: { leads: 0 }, scrubbed: true });
    } finally {
      reader.close();
      await t.close();
    }
  });
});

describe('lead retention', () => {
  const DAY = 86_400_000;
  const insertLeads = async (t: TestApp, count: number, receivedAt: Date, prefix: string) => {
    const rows = Array.from({ length: count }, (_, i) => storedLead(i, { email: `${prefix}${i}@example.com`, receivedAt }));
    const repo = t.app.get<Repository<Lead>>(getRepositoryToken(Lead));
    for (let start = 0; start < rows.length; start += 50) await repo.insert(rows.slice(start, start + 50));
    return rows.map((row) => row.id);
  };
  /** Starts an instance whose run at boot is over: under load it could still be erasing while a test writes its leads. */
  const startSettled = async (env: Record<string, string>, database?: TestDatabase) => {
    const t = await startTestApp(env, database);
    await t.app.get(LeadRetention).run();
    return t;
  };
  const erasedByRetention = async (t: TestApp) =>
    ((await t.dataSource.query("SELECT payload FROM webhook_messages WHERE event_type = 'lead.erased'")) as { payload: string }[])
      .map((row) => JSON.parse(row.payload).data as { lead_ids: string[]; reason: string })
      .filter((data) => data.reason === 'retention');

  it('erases only the leads older than LEAD_RETENTION_DAYS, in batches, and says so with lead.erased', async () => {
    const t = await startSettled({ LEAD_RETENTION_DAYS: '30', WEBHOOK_WORKER: 'false' });
    try {
      const old = await insertLeads(t, 250, new Date(Date.now() - 31 * DAY), 'old');
      const fresh = await insertLeads(t, 3, new Date(Date.now() - 29 * DAY), 'fresh');
      const counts = await t.app.get(LeadRetention).run();
      expect(counts.leads).toBe(250);
      const left = ((await t.dataSource.query('SELECT id FROM leads')) as { id: string }[]).map((row) => row.id).sort();
      expect(left).toEqual([...fresh].sort());
      const events = await erasedByRetention(t);
      expect(events.length).toBe(3);
      expect(events.flatMap((e) => e.lead_ids).sort()).toEqual([...old].sort());
    } finally {
      await t.close();
    }
  });

  itIf('postgres')('two instances at once erase disjoint batches, nothing twice, and all that expired', async () => {
    const database = await freshDatabase();
    const env = { LEAD_RETENTION_DAYS: '1', WEBHOOK_WORKER: 'false' };
    const a = await startSettled(env, database);
    const b = await startSettled(env, database);
    try {
      const old = await insertLeads(a, 1200, new Date(Date.now() - 2 * DAY), 'expired');
      const [ca, cb] = await Promise.all([a.app.get(LeadRetention).run(), b.app.get(LeadRetention).run()]);
      expect(ca.leads + cb.leads).toBe(1200);
      expect(ca.leads).toBeGreaterThan(0);
      expect(cb.leads).toBeGreaterThan(0);
      const ids = (await erasedByRetention(a)).flatMap((e) => e.lead_ids);
      expect(ids).toHaveLength(1200);
      expect(new Set(ids).size).toBe(1200);
      expect([...ids].sort()).toEqual([...old].sort());
      expect(((await a.dataSource.query('SELECT COUNT(*) AS n FROM leads')) as { n: unknown }[])[0].n).toEqual(ON_POSTGRES ? '0' : 0);
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });
});
