/** @database review of held and spam leads: the screening filter, held_count, releases, spam retention */
import { Logger } from '@nestjs/common';
import type { Response } from 'supertest';
import { LeadRetention } from '../src/data-subject/lead-retention.service.js';
import { expectContract } from './support/contract.js';
import { expectProblem } from './support/problem.js';
import { operatorToken } from './support/operator-token.js';
import { storeScreenedLead } from './support/screened-leads.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/**
 * The screening verdict on every read surface, the `screening` filter (accepted by default) with `held_count`, and the
 * review: POST /api/v1/leads/{id}/screening (scope leads:screen), whose first acceptance of a lead delivers its
 * `lead.received` exactly once. Spam leads are erased after SPAM_RETENTION_DAYS; data-subject requests reach every
 * verdict. Every response is checked against the contract.
 */

const FAST = { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms', WEBHOOK_POLL_INTERVAL: '20ms', WEBHOOK_TIMEOUT: '2s' };
const DAY = 86_400_000;

type Json = Record<string, any>;

describe('reviewing held and spam leads', () => {
  let t: TestApp;
  let reader: string;
  let screener: string;
  let exporter: string;
  let manager: string;
  /** A unique origem per test, so that each test counts only its own leads. */
  let origem: string;
  let n = 0;

  const get = (path: string, token: string | null = reader) => {
    const req = t.http.get(path);
    return (token === null ? req : req.set('Authorization', `Bearer ${token}`)).then(expectContract);
  };
  const list = (query: Record<string, string> = {}) => get(`/api/v1/leads?${new URLSearchParams({ origem, ...query })}`);
  const decide = (id: string, body: unknown, token: string | null = screener) => {
    const req = t.http.post(`/api/v1/leads/${id}/screening`);
    return (token === null ? req : req.set('Authorization', `Bearer ${token}`)).send(body as object).then(expectContract);
  };
  /** Stores a lead of this verdict in this test's origem, `ageMs` old. */
  const stored = (verdict: 'accepted' | 'held' | 'spam', ageMs = 0, email?: string) =>
    storeScreenedLead(t, n++, verdict, { origem, receivedAt: new Date(Date.now() - ageMs), ...(email ? { email, emailFolded: email } : {}) });
  const ids = (res: Response) => (res.body.data as Json[]).map((lead) => lead.id);
  const messagesOf = async (leadId: string) =>
    (
      (await t.dataSource.query(`SELECT event_type, payload FROM webhook_messages WHERE lead_id = '${leadId}'`)) as { event_type: string; payload: string }[]
    ).map((row) => ({ type: row.event_type, payload: JSON.parse(row.payload) }));

  beforeAll(async () => {
    t = await startTestApp(FAST);
    reader = await operatorToken(t, 'leads:read');
    screener = await operatorToken(t, 'leads:read leads:screen', 'op_reviewer');
    exporter = await operatorToken(t, 'leads:export');
    manager = await operatorToken(t, 'webhooks:manage');
  });
  beforeEach(() => {
    origem = `review-${n++}`;
  });
  afterAll(() => t.close());

  describe('the screening filter and held_count', () => {
    it('lists accepted leads by default, each verdict when asked, all with all; held_count counts the held ones whatever the filter', async () => {
      const accepted = await stored('accepted', 3000);
      const held = [await stored('held', 2000), await stored('held', 1000)];
      const spam = await stored('spam', 500);
      const byDefault = await list();
      expect(byDefault.status).toBe(200);
      expect(ids(byDefault)).toEqual([accepted.id]);
      expect(byDefault.body.held_count).toBe(2);
      expect(byDefault.body.data[0].screening).toEqual({
        verdict: 'accepted',
        reasons: [],
        decided_by: 'screening',
        decided_at: accepted.receivedAt.toISOString(),
      });
      expect(ids(await list({ screening: 'accepted' }))).toEqual([accepted.id]);
      const heldPage = await list({ screening: 'held' });
      expect(ids(heldPage)).toEqual([held[1].id, held[0].id]);
      expect(heldPage.body.data[0].screening).toMatchObject({ verdict: 'held', reasons: ['disposable_email'] });
      const spamPage = await list({ screening: 'spam' });
      expect([ids(spamPage), spamPage.body.held_count]).toEqual([[spam.id], 2]);
      expect(ids(await list({ screening: 'all' }))).toEqual([spam.id, held[1].id, held[0].id, accepted.id]);
      // held_count follows the other filters: none in another origem.
      expect((await get(`/api/v1/leads?origem=${origem}-none`)).body).toEqual({ data: [], next_cursor: null, held_count: 0 });
      // A lead read by id shows its verdict whatever it is.
      expect((await get(`/api/v1/leads/${spam.id}`)).body.screening).toEqual({
        verdict: 'spam',
        reasons: ['honeypot'],
        decided_by: 'screening',
        decided_at: spam.receivedAt.toISOString(),
      });
    });

    it('binds the verdict into the cursor and the next link; another verdict with that cursor is invalid_cursor', async () => {
      const held = [await stored('held', 3000), await stored('held', 2000), await stored('held', 1000)];
      const first = await list({ screening: 'held', limit: '2' });
      expect(ids(first)).toEqual([held[2].id, held[1].id]);
      expect(first.headers.link).toContain('screening=held');
      const second = await list({ screening: 'held', limit: '2', cursor: first.body.next_cursor });
      expect([ids(second), second.body.next_cursor]).toEqual([[held[0].id], null]);
      for (const screening of ['all', 'accepted', 'spam']) {
        const refused = await list({ screening, limit: '2', cursor: first.body.next_cursor });
        expectProblem(refused, 400, 'invalid_query');
        expect(refused.body.errors).toEqual([expect.objectContaining({ parameter: 'cursor', code: 'invalid_cursor' })]);
      }
      // The default (accepted) is a filter of its own: a cursor of `all` is not one of its.
      const all = await list({ screening: 'all', limit: '1' });
      expectProblem(await list({ limit: '1', cursor: all.body.next_cursor }), 400, 'invalid_query');
    });

    it('refuses an unknown verdict, naming screening', async () => {
      for (const screening of ['Held', 'pending', '']) {
        const res = await list({ screening });
        expectProblem(res, 400, 'invalid_query');
        expect(res.body.errors).toEqual([expect.objectContaining({ parameter: 'screening' })]);
      }
    });

    it('counts held leads up to the cap of 1000 (1000 or more)', async () => {
      for (let start = 0; start < 1003; start += 100) {
        await Promise.all(Array.from({ length: Math.min(100, 1003 - start) }, () => stored('held', 10_000)));
      }
      const res = await list({ limit: '1' });
      expect([res.body.data, res.body.held_count]).toEqual([[], 1000]);
      expect((await list({ screening: 'held', limit: '1', since: new Date(Date.now() - 5000).toISOString() })).body.held_count).toBe(0);
    });

    it('exports accepted leads by default, the others when asked, with the screening in JSON Lines and CSV', async () => {
      const accepted = await stored('accepted', 2000);
      const held = await stored('held', 1000);
      const exported = async (query: Record<string, string>) => {
        const res = await get(`/api/v1/leads/export?${new URLSearchParams({ origem, ...query })}`, exporter);
        expect(res.status).toBe(200);
        return res.text;
      };
      const lines = (text: string) =>
        text
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Json);
      expect(lines(await exported({ format: 'jsonl' })).map((lead) => lead.id)).toEqual([accepted.id]);
      const heldLines = lines(await exported({ format: 'jsonl', screening: 'held' }));
      expect(heldLines).toEqual([(await get(`/api/v1/leads/${held.id}`)).body]);
      const csv = await exported({ screening: 'all', columns: 'id,screening_verdict,screening_reasons,screening_decided_by' });
      expect(csv).toBe(
        `id,screening_verdict,screening_reasons,screening_decided_by\r\n${held.id},held,disposable_email,screening\r\n${accepted.id},accepted,,screening\r\n`,
      );
      const ptBr = await exported({ screening: 'held', delimiter: ';', columns: 'nome,screening_verdict,screening_reasons' });
      expect(ptBr).toBe(`\ufeffNome;Triagem: veredito;Triagem: motivos\r\n${held.nome};held;disposable_email\r\n`);
    });

    it('GraphQL: accepted by default, filter.screening for the others, held_count and each lead’s screening', async () => {
      const accepted = await stored('accepted', 2000);
      const held = await stored('held', 1000);
      const query = `query($filter: LeadFilter) { leads(filter: $filter) { held_count edges { node { id screening { verdict reasons decided_by decided_at } } } } }`;
      const gql = async (filter: Json) => {
        const res = await t.http.post('/api/v1/graphql').set('Authorization', `Bearer ${reader}`).send({ query, variables: { filter } }).then(expectContract);
        expect(res.status).toBe(200);
        expect(res.body.errors).toBeUndefined();
        return res.body.data.leads as Json;
      };
      const byDefault = await gql({ origem });
      expect(byDefault.held_count).toBe(1);
      expect(byDefault.edges.map((edge: Json) => edge.node.id)).toEqual([accepted.id]);
      const heldOnly = await gql({ origem, screening: 'held' });
      expect(heldOnly.edges).toEqual([
        {
          node: {
            id: held.id,
            screening: { verdict: 'held', reasons: ['disposable_email'], decided_by: 'screening', decided_at: held.receivedAt.toISOString() },
          },
        },
      ]);
      expect((await gql({ origem, screening: 'all' })).edges).toHaveLength(2);
    });
  });

  describe('POST /api/v1/leads/{id}/screening', () => {
    it('401 without a token, 403 without leads:screen, 404 for an unknown or malformed id, 422 for a bad body', async () => {
      const held = await stored('held');
      const anonymous = await decide(held.id, { verdict: 'accepted' }, null);
      expectProblem(anonymous, 401, 'authentication_required');
      expect(anonymous.headers['www-authenticate']).toContain('scope="leads:screen"');
      expectProblem(await decide(held.id, { verdict: 'accepted' }, reader), 403, 'insufficient_scope');
      expectProblem(await decide('019ab5f6-3a07-7c1e-9a55-2f0e4b8d6c21', { verdict: 'accepted' }), 404, 'lead_not_found');
      expectProblem(await decide('not-a-uuid', { verdict: 'accepted' }), 404, 'lead_not_found');
      for (const [body, pointer, code] of [
        [{ verdict: 'held' }, '/verdict', 'invalid_value'],
        [{ verdict: 'maybe' }, '/verdict', 'invalid_value'],
        [{ verdict: 1 }, '/verdict', 'invalid_type'],
        [{}, '/verdict', 'required'],
        [{ verdict: 'accepted', note: 'ok' }, '/note', 'unknown_field'],
      ] as const) {
        const res = await decide(held.id, body, screener);
        expectProblem(res, 422, 'validation_failed');
        expect(res.body.errors).toEqual([expect.objectContaining({ pointer, code })]);
      }
      expectProblem(await decide(held.id, ['accepted']), 400, 'body_not_object');
      // An agent's token never carries leads:screen: asked for, it is refused; its own token is a 403 here.
      const registration = await t.http.post('/api/v1/agent/identity').send({ type: 'anonymous' });
      const exchange = (scope?: string) =>
        t.http
          .post('/oauth2/token')
          .type('form')
          .send({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: registration.body.identity_assertion, ...(scope ? { scope } : {}) });
      expect((await exchange('leads:screen')).status).toBe(400);
      const agent = await exchange();
      expect(agent.body.scope).toBe('leads:write');
      expectProblem(await decide(held.id, { verdict: 'accepted' }, agent.body.access_token), 403, 'insufficient_scope');
      // Nothing changed.
      expect((await get(`/api/v1/leads/${held.id}`)).body.screening.verdict).toBe('held');
    });

    it('releases a held lead: 200 with its view, decided by the operator now, reasons kept; listed and delivered once', async () => {
      const receiver = await WebhookReceiver.start();
      const endpoint = await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: receiver.url });
      expect(endpoint.status).toBe(201);
      try {
        const held = await stored('held', 1000);
        expect(await messagesOf(held.id)).toEqual([]);
        const before = Date.now();
        const log = jest.spyOn(Logger.prototype, 'log');
        const res = await decide(held.id.toUpperCase(), { verdict: 'accepted' });
        const audit = log.mock.calls.filter(([line]) => (line as { audit?: unknown })?.audit === 'lead_screening');
        log.mockRestore();
        expect(audit).toEqual([
          [
            {
              audit: 'lead_screening',
              route: 'POST /api/v1/leads/{id}/screening',
              client_id: 'op_reviewer',
              request_id: res.headers['x-request-id'],
              lead_id: held.id,
              verdict_before: 'held',
              verdict: 'accepted',
              announced: true,
            },
            'lead screening decided',
          ],
        ]);
        expect(res.status).toBe(200);
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.body).toEqual({ ...(await get(`/api/v1/leads/${held.id}`)).body });
        expect(res.body.screening).toEqual({ verdict: 'accepted', reasons: ['disposable_email'], decided_by: 'op_reviewer', decided_at: expect.any(String) });
        expect(Date.parse(res.body.screening.decided_at)).toBeGreaterThanOrEqual(before - 1);
        expect(ids(await list())).toEqual([held.id]);
        expect((await list()).body.held_count).toBe(0);

        const [delivery] = await receiver.waitFor(1);
        const event = JSON.parse(delivery.body);
        expect(event).toEqual({ type: 'lead.received', timestamp: res.body.screening.decided_at, data: res.body });
        // Released again, marked spam and released once more: still the one lead.received.
        expect((await decide(held.id, { verdict: 'accepted' })).status).toBe(200);
        expect((await decide(held.id, { verdict: 'spam' })).body.screening.verdict).toBe('spam');
        expect((await decide(held.id, { verdict: 'accepted' })).body.screening.verdict).toBe('accepted');
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(receiver.received).toHaveLength(1);
        expect((await messagesOf(held.id)).map((message) => message.type)).toEqual(['lead.received']);
      } finally {
        await t.http.delete(`/api/v1/webhooks/${endpoint.body.id}`).set('Authorization', `Bearer ${manager}`);
        await receiver.close();
      }
    });

    it('through intake: a disposable address held and a filled trap judged spam are unlisted and undelivered until released', async () => {
      const receiver = await WebhookReceiver.start();
      const endpoint = await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: receiver.url });
      expect(endpoint.status).toBe(201);
      try {
        const send = (body: Json, headers: Record<string, string> = {}) => t.http.post('/api/v1/lead').set(headers).send(body).then(expectContract);
        const accepted = await send({ nome: 'Beatriz Lima', email: 'beatriz@exemplo.com.br', origem });
        const held = await send({ nome: 'Carla Dias', email: 'carla@mailinator.com', origem });
        const spam = await send({ nome: 'Bot', email: 'bot@exemplo.com.br', origem }, { 'Form-Trap': 'http://spam.example', 'Form-Token': 'x' });
        for (const res of [accepted, held, spam]) {
          expect(res.status).toBe(201);
          expect(Object.keys(res.body).sort()).toEqual(['id', 'received_at', 'status']);
        }
        const [first] = await receiver.waitFor(1);
        expect(JSON.parse(first.body).data.id).toBe(accepted.body.id);
        expect(ids(await list())).toEqual([accepted.body.id]);
        expect((await list()).body.held_count).toBe(1);
        expect(ids(await list({ screening: 'held' }))).toEqual([held.body.id]);
        expect(ids(await list({ screening: 'spam' }))).toEqual([spam.body.id]);
        expect((await get(`/api/v1/leads/${held.body.id}`)).body.screening).toMatchObject({
          verdict: 'held',
          reasons: ['disposable_email'],
          decided_by: 'screening',
        });
        expect((await get(`/api/v1/leads/${spam.body.id}`)).body.screening).toMatchObject({ verdict: 'spam', decided_by: 'screening' });
        expect(receiver.received).toHaveLength(1);

        expect((await decide(held.body.id, { verdict: 'accepted' })).status).toBe(200);
        const [, released] = await receiver.waitFor(2);
        expect(JSON.parse(released.body)).toMatchObject({
          type: 'lead.received',
          data: { id: held.body.id, screening: { verdict: 'accepted', decided_by: 'op_reviewer' } },
        });
        expect(ids(await list())).toEqual([held.body.id, accepted.body.id]);
        expect((await list()).body.held_count).toBe(0);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(receiver.received).toHaveLength(2);
      } finally {
        await t.http.delete(`/api/v1/webhooks/${endpoint.body.id}`).set('Authorization', `Bearer ${manager}`);
        await receiver.close();
      }
    });

    it('announces a lead once however many releases run at once', async () => {
      const endpoint = await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: 'http://127.0.0.1:9/hook' });
      try {
        const spam = await stored('spam');
        const answers = await Promise.all(Array.from({ length: 8 }, () => decide(spam.id, { verdict: 'accepted' })));
        expect(answers.map((res) => res.status)).toEqual(Array(8).fill(200));
        const messages = await messagesOf(spam.id);
        expect(messages.map((message) => message.type)).toEqual(['lead.received']);
        expect(messages[0].payload.data.screening).toMatchObject({ verdict: 'accepted', reasons: ['honeypot'], decided_by: 'op_reviewer' });
        const [row] = await t.dataSource.query(`SELECT announced_at FROM leads WHERE id = '${spam.id}'`);
        expect(row.announced_at).not.toBeNull();
      } finally {
        await t.http.delete(`/api/v1/webhooks/${endpoint.body.id}`).set('Authorization', `Bearer ${manager}`);
      }
    });

    it('a lead accepted at intake, marked spam and accepted again, is not announced a second time', async () => {
      const endpoint = await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: 'http://127.0.0.1:9/hook' });
      try {
        const receipt = await t.http.post('/api/v1/lead').send({ nome: 'Ana', email: 'ana@example.com', origem }).then(expectContract);
        expect(receipt.status).toBe(201);
        const id = receipt.body.id as string;
        expect((await messagesOf(id)).map((message) => message.type)).toEqual(['lead.received']);
        expect((await decide(id, { verdict: 'spam' })).body.screening).toMatchObject({ verdict: 'spam', reasons: [], decided_by: 'op_reviewer' });
        expect(ids(await list())).toEqual([]);
        expect(ids(await list({ screening: 'spam' }))).toEqual([id]);
        expect((await decide(id, { verdict: 'accepted' })).status).toBe(200);
        expect((await messagesOf(id)).map((message) => message.type)).toEqual(['lead.received']);
      } finally {
        await t.http.delete(`/api/v1/webhooks/${endpoint.body.id}`).set('Authorization', `Bearer ${manager}`);
      }
    });
  });

  describe('data-subject requests reach every verdict', () => {
    it('access lists a person’s held and spam leads, and erasure erases them', async () => {
      const email = `subject-${n}@example.com`;
      const leads = [await stored('accepted', 3000, email), await stored('held', 2000, email), await stored('spam', 1000, email)];
      const access = await t.http.post('/api/v1/data-subject-requests/access').set('Authorization', `Bearer ${reader}`).send({ email }).then(expectContract);
      expect(access.status).toBe(200);
      expect(access.body.lead_ids).toEqual(leads.map((lead) => lead.id).reverse());
      expect(access.body.data.map((lead: Json) => lead.screening.verdict)).toEqual(['spam', 'held', 'accepted']);
      const eraser = await operatorToken(t, 'leads:erase');
      const erased = await t.http.post('/api/v1/data-subject-requests/erasure').set('Authorization', `Bearer ${eraser}`).send({ email }).then(expectContract);
      expect(erased.status).toBe(200);
      expect(erased.body.counts.leads).toBe(3);
      expect(await t.dataSource.query(`SELECT id FROM leads WHERE email_folded = '${email}'`)).toEqual([]);
    });
  });
});

describe('spam retention', () => {
  it('erases spam leads older than SPAM_RETENTION_DAYS through the erasure path; held and accepted leads stay', async () => {
    const t = await startTestApp({ SPAM_RETENTION_DAYS: '10', WEBHOOK_WORKER: 'false' });
    try {
      await t.app.get(LeadRetention).run();
      const old = (verdict: 'accepted' | 'held' | 'spam', i: number) => storeScreenedLead(t, i, verdict, { receivedAt: new Date(Date.now() - 11 * DAY) });
      const oldSpam = [await old('spam', 1), await old('spam', 2)];
      const kept = [await old('held', 3), await old('accepted', 4), await storeScreenedLead(t, 5, 'spam', { receivedAt: new Date(Date.now() - 9 * DAY) })];
      const counts = await t.app.get(LeadRetention).run();
      expect(counts.leads).toBe(2);
      const left = ((await t.dataSource.query('SELECT id FROM leads')) as { id: string }[]).map((row) => row.id).sort();
      expect(left).toEqual(kept.map((lead) => lead.id).sort());
      const events = ((await t.dataSource.query("SELECT payload FROM webhook_messages WHERE event_type = 'lead.erased'")) as { payload: string }[]).map(
        (row) => JSON.parse(row.payload).data,
      );
      expect(events).toEqual([{ lead_ids: expect.arrayContaining(oldSpam.map((lead) => lead.id)), reason: 'retention' }]);
    } finally {
      await t.close();
    }
  });

  it('with LEAD_RETENTION_DAYS, held and accepted leads follow it', async () => {
    const t = await startTestApp({ SPAM_RETENTION_DAYS: '10', LEAD_RETENTION_DAYS: '20', WEBHOOK_WORKER: 'false' });
    try {
      await t.app.get(LeadRetention).run();
      const at = (days: number) => new Date(Date.now() - days * DAY);
      await storeScreenedLead(t, 1, 'held', { receivedAt: at(21) });
      await storeScreenedLead(t, 2, 'accepted', { receivedAt: at(21) });
      const kept = [await storeScreenedLead(t, 3, 'held', { receivedAt: at(15) }), await storeScreenedLead(t, 4, 'accepted', { receivedAt: at(15) })];
      expect((await t.app.get(LeadRetention).run()).leads).toBe(2);
      const left = ((await t.dataSource.query('SELECT id FROM leads')) as { id: string }[]).map((row) => row.id).sort();
      expect(left).toEqual(kept.map((lead) => lead.id).sort());
    } finally {
      await t.close();
    }
  });
});
