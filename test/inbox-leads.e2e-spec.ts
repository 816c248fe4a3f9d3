/** @database the inbox's lead pages: leads, one lead, held and spam, export, the person's data and erasure (issue 35) */
import { Logger } from '@nestjs/common';
import type { Response } from 'supertest';
import { parse as parseCsv } from 'csv-parse/sync';
import { Lead } from '../src/leads/lead.entity.js';
import { expectContract } from './support/contract.js';
import { eventually } from './support/eventually.js';
import { InboxPerson, signedInAs } from './support/inbox-session.js';
import { operatorToken } from './support/operator-token.js';
import { storeScreenedLead } from './support/screened-leads.js';
import { storedLead } from './support/stored-leads.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/**
 * The lead pages as a person of each role sees and works them: what a page shows (escaped), the filters and the search,
 * counts, keyset pages, htmx fragments, release and spam (one and in bulk, the webhook delivered), the export read
 * back, the person's data, erasure behind its typed confirmation; and what a role without the scope, or a post
 * without the CSRF token, cannot do. Every answer is checked against the contract.
 */

const FAST = { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms', WEBHOOK_POLL_INTERVAL: '20ms', WEBHOOK_TIMEOUT: '2s' };
const SCRIPT = '<script>alert(1)</script>';
const HOSTILE = `"><img src=x onerror=alert(1)>${SCRIPT}`;

type Row = Record<string, unknown>;

describe('the inbox’s lead pages', () => {
  let t: TestApp;
  let viewer: InboxPerson;
  let marketer: InboxPerson;
  let admin: InboxPerson;
  let manager: string;
  /** A unique origem per test, so that each test lists only its own leads. */
  let origem: string;
  let n = 0;

  const stored = (verdict: 'accepted' | 'held' | 'spam', fields: Row = {}, ageMs = 0) =>
    storeScreenedLead(t, n++, verdict, { origem, receivedAt: new Date(Date.now() - ageMs), ...fields });
  const page = async (person: InboxPerson, path: string): Promise<Response> => expectContract(await person.get(path));
  const rowOf = async (id: string) => ((await t.dataSource.query(`SELECT * FROM leads WHERE id = '${id}'`)) as Row[])[0];
  /** A GET by this person's browser, to add headers to. */
  const as = (person: InboxPerson, path: string) => t.http.get(path).set('Cookie', person.cookie);
  /** A download's body as text, whatever its media type. */
  const download = async (person: InboxPerson, path: string): Promise<Response> =>
    expectContract(
      await t.http
        .get(path)
        .set('Cookie', person.cookie)
        .buffer(true)
        .parse((res, done) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => done(null, text));
        }),
    );
  /** The lead ids a page links to, in order (each lead once). */
  const linked = (html: string) => [...new Set([...html.matchAll(/href="\/inbox\/leads\/([0-9a-f-]{36})"/g)].map((m) => m[1]))];

  beforeAll(async () => {
    t = await startTestApp(FAST);
    [viewer, marketer, admin] = [await signedInAs(t, 'viewer'), await signedInAs(t, 'marketer'), await signedInAs(t, 'admin')];
    manager = await operatorToken(t, 'webhooks:manage');
  });
  beforeEach(() => {
    origem = `inbox-${n++}`;
  });
  afterAll(() => t.close());

  describe('GET /inbox/leads', () => {
    it('lists accepted leads newest first with the count and the held count, in pt-BR and in English', async () => {
      const old = await stored('accepted', { nome: 'Ana Antiga' }, 3000);
      const recent = await stored('accepted', { nome: 'Bruno Recente' }, 1000);
      await stored('held', {}, 2000);
      const res = await page(viewer, `/inbox/leads?origem=${origem}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(linked(res.text)).toEqual([recent.id, old.id]);
      expect(res.text).toContain('<html lang="pt-BR">');
      expect(res.text).toContain('<strong>2 leads</strong>');
      expect(res.text).toContain('Retidos para revisão: 1');
      expect(res.text).toMatch(/<input type="search" id="q" name="q"/);
      const en = expectContract(await as(viewer, `/inbox/leads?origem=${origem}`).set('Accept-Language', 'en'));
      expect(en.text).toContain('<strong>2 leads</strong>');
      expect(en.text).toContain('Held for review: 1');
    });

    it('filters by verdict, channel, origem and days in TIME_ZONE, and finds "João" by "joao"', async () => {
      const joao = await stored('accepted', { nome: 'João Silva', channel: 'form' }, 2000);
      const maria = await stored('accepted', { nome: 'Maria Souza', channel: 'mcp' }, 1000);
      const held = await stored('held', { nome: 'Joana Retida' });
      const ids = async (query: string) => linked((await page(viewer, `/inbox/leads?origem=${origem}&${query}`)).text);
      expect(await ids('q=joao')).toEqual([joao.id]);
      expect(await ids('q=JOÃO+silva')).toEqual([joao.id]);
      expect(await ids('channel=mcp')).toEqual([maria.id]);
      expect(await ids('screening=held')).toEqual([held.id]);
      expect(await ids('screening=all&q=jo')).toEqual([held.id, joao.id]);
      // Empty fields of the form are no filter.
      expect(await ids('since=&until=&channel=&q=&screening=')).toEqual([maria.id, joao.id]);
      // A day is a day in America/Sao_Paulo: a lead at 01:30 UTC on 1 March was received on 28 February there.
      const late = await stored('accepted', { receivedAt: new Date('2025-03-01T01:30:00Z') });
      expect(await ids('since=2025-02-28&until=2025-02-28')).toEqual([late.id]);
      expect(await ids('since=2025-03-01&until=2025-03-01')).toEqual([]);
    });

    it('names a refused filter in the page’s words (400), and answers htmx with the results alone', async () => {
      const refused = await page(viewer, `/inbox/leads?origem=${origem}&since=2026-11-28&until=2026-11-26`);
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('Recebidos até: fora do intervalo');
      expect(refused.text).toContain('value="2026-11-28"');
      expect((await page(viewer, '/inbox/leads?since=ontem')).text).toContain('Recebidos a partir de: valor em formato inválido.');
      const lead = await stored('accepted', { nome: 'Carla Htmx' });
      const fragment = expectContract(await as(viewer, `/inbox/leads?origem=${origem}&q=carla`).set('HX-Request', 'true'));
      expect(fragment.status).toBe(200);
      expect(fragment.text.startsWith('<section id="leads-results"')).toBe(true);
      expect(fragment.text).not.toContain('<html');
      expect(linked(fragment.text)).toEqual([lead.id]);
    });

    it('pages by keyset: 50 a page, the next page by its link, the first again; a cursor of other filters is refused', async () => {
      const leads = [];
      for (let i = 0; i < 53; i++) leads.push(await stored('accepted', {}, 60_000 - i * 100));
      const first = await page(viewer, `/inbox/leads?origem=${origem}`);
      expect(linked(first.text)).toEqual(
        leads
          .slice(3)
          .reverse()
          .map((lead) => lead.id),
      );
      expect(first.text).toContain('<strong>53 leads</strong>');
      const next = /<a rel="next" href="([^"]+)"/.exec(first.text)![1].replace(/&amp;/g, '&');
      const second = await page(viewer, next);
      expect(linked(second.text)).toEqual(
        leads
          .slice(0, 3)
          .reverse()
          .map((lead) => lead.id),
      );
      expect(second.text).not.toContain('rel="next"');
      expect(second.text).toContain('Primeira página');
      const cursor = new URL(next, 'http://x').searchParams.get('cursor')!;
      const other = await page(viewer, `/inbox/leads?origem=${origem}-other&cursor=${cursor}`);
      expect(other.status).toBe(400);
      expect(other.text).toContain('Essa página não vale para estes filtros');
    });

    it('counts exactly up to 10,000 and shows "10.000+" beyond', async () => {
      const base = Date.now() - 60_000;
      for (let start = 0; start <= 10_000; start += 500) {
        const batch = Array.from({ length: Math.min(500, 10_001 - start) }, (_, k) =>
          storedLead(100_000 + start + k, { origem, receivedAt: new Date(base - start - k) }),
        );
        await t.dataSource.getRepository(Lead).insert(batch);
      }
      expect((await page(viewer, `/inbox/leads?origem=${origem}`)).text).toContain('<strong>10.000+ leads</strong>');
      expect(expectContract(await as(viewer, `/inbox/leads?origem=${origem}`).set('Accept-Language', 'en')).text).toContain('<strong>10,000+ leads</strong>');
      // Before the newest: 10,000 exactly.
      expect((await page(viewer, `/inbox/leads?origem=${origem}&until=${new Date(base).toISOString()}`)).text).toContain('<strong>10.000 leads</strong>');
    });

    it('shows the export buttons to a marketer, not to a viewer; 303 to the sign-in page without a session', async () => {
      expect((await page(marketer, '/inbox/leads')).text).toContain('href="/inbox/export?format=csv"');
      expect((await page(viewer, '/inbox/leads')).text).not.toContain('/inbox/export');
      const anonymous = expectContract(await t.http.get('/inbox/leads?q=joao'));
      expect(anonymous.status).toBe(303);
      expect(anonymous.headers.location).toBe(`/inbox/sign-in?return=${encodeURIComponent('/inbox/leads?q=joao')}`);
    });
  });

  describe('GET /inbox/leads/{id}', () => {
    it('shows every field, the attribution, the consent with its wording, the screening reasons: all as text', async () => {
      const wording = `Aceito receber comunicações ${SCRIPT}`;
      const sent = await t.http.post('/api/v1/lead').send({
        nome: `Zé ${HOSTILE}`,
        email: 'ze.hostil@empresa.example',
        telefone: '+55 11 98765-4321',
        empresa: `Empresa ${HOSTILE}`,
        mensagem: `Olá\n${HOSTILE}`,
        origem: `${origem}${SCRIPT}`.slice(0, 64),
        legal_bases: [{ category: 'communications', type: 'consent', status: 'granted' }],
        consent_text: wording,
        context: { page_title: `Página ${HOSTILE}`, utm_source: `news${SCRIPT}`, page_url: 'https://empresa.example/contato' },
      });
      expect(sent.status).toBe(201);
      const res = await page(viewer, `/inbox/leads/${sent.body.id}`);
      expect(res.status).toBe(200);
      // Nothing a lead holds becomes markup: no script element, no attribute breaks out.
      expect(res.text).not.toContain(SCRIPT);
      expect(res.text).not.toContain('<img');
      expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
      const escaped = '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(1)&lt;/script&gt;';
      expect(res.text).toContain(`Zé ${escaped}`);
      expect(res.text).toContain(`Empresa ${escaped}`);
      expect(res.text).toContain(`Página ${escaped}`);
      expect(res.text).toContain('news&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(res.text).toContain('Aceito receber comunicações &lt;script&gt;alert(1)&lt;/script&gt;');
      expect(res.text).toContain('+55 11 98765-4321');
      expect(res.text).toContain('+5511987654321');
      expect(res.text).toContain('https://empresa.example/contato');
      expect(res.text).toContain('Consentimento');
      expect(res.text).toContain('Concedido');
      // Markup in a lead holds it: its reason is shown, with the release button for nobody without leads:screen.
      expect(res.text).toContain('Marcação HTML no texto');
      expect(res.text).not.toContain('/release"');
      expect((await page(marketer, `/inbox/leads/${sent.body.id}`)).text).toContain(`action="/inbox/leads/${sent.body.id}/release"`);
      // The erasure form is the admins' (leads:erase).
      expect(res.text).not.toContain('/erase"');
      expect((await page(admin, `/inbox/leads/${sent.body.id}`)).text).toContain('Para confirmar, digite o e-mail ze.hostil@empresa.example');
    });

    it('audits the read naming the person by user id, and answers 404 for an id that is no lead’s', async () => {
      const lead = await stored('accepted');
      const log = jest.spyOn(Logger.prototype, 'log');
      const res = await page(viewer, `/inbox/leads/${lead.id.toUpperCase()}`);
      const audit = log.mock.calls.filter(([line]) => (line as { audit?: unknown })?.audit === 'lead_read');
      log.mockRestore();
      expect(res.status).toBe(200);
      expect(audit).toEqual([
        [expect.objectContaining({ route: 'GET /inbox/leads/{id}', client_id: `person:${viewer.userId}`, lead_id: lead.id, rows: 1 }), 'leads read'],
      ]);
      expect(JSON.stringify(audit)).not.toContain(viewer.email);
      for (const id of ['019ab5f6-3a07-7c1e-9a55-2f0e4b8d6c21', 'not-a-uuid']) {
        const missing = await page(viewer, `/inbox/leads/${id}`);
        expect(missing.status).toBe(404);
        expect(missing.text).toContain('lead_not_found');
      }
    });
  });

  describe('release and spam', () => {
    it('releases a held lead (303, decided by the person) and its webhook arrives; the page shows the delivery', async () => {
      const receiver = await WebhookReceiver.start();
      const endpoint = await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: receiver.url });
      expect(endpoint.status).toBe(201);
      try {
        const held = await stored('held');
        const res = expectContract(await marketer.post(`/inbox/leads/${held.id}/release`));
        expect(res.status).toBe(303);
        expect(res.headers.location).toBe(`/inbox/leads/${held.id}?done=released`);
        const row = await rowOf(held.id);
        expect([row.screening_verdict, row.screening_decided_by]).toEqual(['accepted', `person:${marketer.userId}`]);
        const [delivery] = await receiver.waitFor(1);
        expect(JSON.parse(delivery.body)).toMatchObject({ type: 'lead.received', data: { id: held.id, screening: { verdict: 'accepted' } } });
        // The delivery shows on the lead's page once recorded; its address only to whoever manages webhooks.
        const shown = await eventually(async () => {
          const text = (await page(admin, `/inbox/leads/${held.id}?done=released`)).text;
          return text.includes('Entregue') ? text : undefined;
        });
        expect(shown).toContain('Lead liberado');
        expect(shown).toContain('lead.received');
        expect(shown).toContain(receiver.url);
        const forViewer = (await page(viewer, `/inbox/leads/${held.id}`)).text;
        expect(forViewer).toContain('Entregue');
        expect(forViewer).not.toContain(receiver.url);
      } finally {
        await t.http.delete(`/api/v1/webhooks/${endpoint.body.id}`).set('Authorization', `Bearer ${manager}`);
        await receiver.close();
      }
    });

    it('answers htmx with the screening section anew', async () => {
      const held = await stored('held');
      const res = expectContract(await marketer.post(`/inbox/leads/${held.id}/spam`, {}, { 'HX-Request': 'true' }));
      expect(res.status).toBe(200);
      expect(res.text.startsWith('<section id="lead-screening"')).toBe(true);
      expect(res.text).toContain('Lead marcado como spam.');
      expect(res.text).toContain(`action="/inbox/leads/${held.id}/release"`);
      expect((await rowOf(held.id)).screening_verdict).toBe('spam');
    });

    it('refuses a viewer (403, nothing changed), a post without the CSRF token or from another origin (403), an unknown lead (404)', async () => {
      const held = await stored('held');
      const viewed = expectContract(await viewer.post(`/inbox/leads/${held.id}/release`));
      expect(viewed.status).toBe(403);
      expect(viewed.text).toContain('insufficient_scope');
      for (const res of [
        await marketer.post(`/inbox/leads/${held.id}/release`, { _csrf: '' }),
        await marketer.post(`/inbox/leads/${held.id}/release`, { _csrf: viewer.csrf }),
        await marketer.post(`/inbox/leads/${held.id}/release`, {}, { Origin: 'https://evil.example' }),
      ]) {
        expectContract(res);
        expect(res.status).toBe(403);
        expect(res.text).toContain('csrf_token_invalid');
      }
      expect((await rowOf(held.id)).screening_verdict).toBe('held');
      expect(expectContract(await marketer.post('/inbox/leads/019ab5f6-3a07-7c1e-9a55-2f0e4b8d6c21/release')).status).toBe(404);
    });
  });

  describe('GET /inbox/held and the bulk decisions', () => {
    it('lists held leads with their reasons and both counts; a viewer gets no checkboxes', async () => {
      const held = [await stored('held', {}, 2000), await stored('held', {}, 1000)];
      await stored('spam');
      await stored('accepted');
      const res = await page(marketer, `/inbox/held?origem=${origem}`);
      expect(res.status).toBe(200);
      expect(linked(res.text)).toEqual([held[1].id, held[0].id]);
      expect(res.text).toContain('Retidos (2)');
      expect(res.text).toContain('Spam (1)');
      expect(res.text).toContain('E-mail descartável');
      expect(res.text).toContain(`name="id" value="${held[1].id}"`);
      expect((await page(viewer, `/inbox/held?origem=${origem}`)).text).not.toContain('type="checkbox"');
      const spam = await page(marketer, `/inbox/held?origem=${origem}&screening=spam`);
      expect(spam.text).toContain('Campo-armadilha preenchido');
    });

    it('releases the chosen leads, each webhook delivered once, and marks others spam', async () => {
      const receiver = await WebhookReceiver.start();
      const endpoint = await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: receiver.url });
      try {
        const held = [await stored('held'), await stored('held'), await stored('held')];
        const released = expectContract(await marketer.post('/inbox/held/release', { id: [held[0].id, held[1].id, '019ab5f6-3a07-7c1e-9a55-2f0e4b8d6c21'] }));
        expect(released.status).toBe(303);
        expect(released.headers.location).toBe('/inbox/held?released=2&missing=1');
        const notice = await page(marketer, released.headers.location);
        expect(notice.text).toContain('Liberados: 2.');
        expect(notice.text).toContain('Não encontrados (já apagados): 1.');
        const spammed = expectContract(await marketer.post('/inbox/held/spam', { id: held[2].id }));
        expect(spammed.headers.location).toBe('/inbox/held?spammed=1');
        expect([(await rowOf(held[0].id)).screening_verdict, (await rowOf(held[1].id)).screening_verdict, (await rowOf(held[2].id)).screening_verdict]).toEqual(
          ['accepted', 'accepted', 'spam'],
        );
        const got = (await receiver.waitFor(2)).map((delivery) => JSON.parse(delivery.body).data.id).sort();
        expect(got).toEqual([held[0].id, held[1].id].sort());
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(receiver.received).toHaveLength(2);
      } finally {
        await t.http.delete(`/api/v1/webhooks/${endpoint.body.id}`).set('Authorization', `Bearer ${manager}`);
        await receiver.close();
      }
    });

    it('gives the queue again (422) when no lead was chosen, and refuses a viewer (403)', async () => {
      const none = expectContract(await marketer.post('/inbox/held/release', {}));
      expect(none.status).toBe(422);
      expect(none.text).toContain('Escolha ao menos um lead.');
      const held = await stored('held');
      expect(expectContract(await viewer.post('/inbox/held/release', { id: held.id })).status).toBe(403);
      expect((await rowOf(held.id)).screening_verdict).toBe('held');
    });
  });

  describe('GET /inbox/export', () => {
    it('streams the pt-BR CSV of the current filters, read back; JSON Lines; audited by user id', async () => {
      const joao = await stored('accepted', { nome: 'João Exportado', empresa: 'Empresa; Ltda' }, 1000);
      await stored('accepted', { nome: 'Outro Nome' });
      const log = jest.spyOn(Logger.prototype, 'log');
      const res = await download(marketer, `/inbox/export?origem=${origem}&q=joao&format=csv`);
      // The audit line is written when the stream has ended, which the client may see first.
      const auditOf = () => log.mock.calls.find(([line]) => (line as { route?: unknown })?.route === 'GET /inbox/export');
      const audit = await eventually(auditOf);
      log.mockRestore();
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="leads-\d{4}-\d{2}-\d{2}\.csv"$/);
      const csv = res.body as string;
      expect(csv.startsWith('\ufeff')).toBe(true);
      const rows = parseCsv(csv.slice(1), { delimiter: ';', columns: true }) as Record<string, string>[];
      expect(rows).toEqual([
        {
          'Recebido em': expect.stringMatching(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}$/),
          Nome: 'João Exportado',
          'E-mail': joao.email,
          Telefone: '',
          Empresa: 'Empresa; Ltda',
          Mensagem: '',
          Origem: origem,
        },
      ]);

      expect(audit?.[0]).toMatchObject({ audit: 'lead_read', client_id: `person:${marketer.userId}`, rows: 1, format: 'csv', delimiter: ';' });
      const lines = await download(marketer, `/inbox/export?origem=${origem}&format=jsonl`);
      expect(lines.headers['content-type']).toMatch(/^application\/jsonl/);
      expect(
        (lines.body as string)
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).nome),
      ).toEqual(['Outro Nome', 'João Exportado']);
    });

    it('refuses a viewer (403) and a bad filter (400)', async () => {
      expect(expectContract(await viewer.get('/inbox/export?format=csv')).status).toBe(403);
      const bad = expectContract(await marketer.get('/inbox/export?format=xlsx'));
      expect(bad.status).toBe(400);
      expect(expectContract(await marketer.get('/inbox/export?channel=fax')).status).toBe(400);
    });
  });

  describe('the person’s data and erasure', () => {
    it('shows and downloads what the access request gives, audited as that request naming the person', async () => {
      const email = `pessoa.${n}@empresa.example`;
      const first = await stored('accepted', { email, emailFolded: email, nome: 'Pessoa Um' }, 2000);
      const second = await stored('held', { email, emailFolded: email, nome: 'Pessoa Dois' }, 1000);
      const html = expectContract(await viewer.post(`/inbox/leads/${first.id}/access`, { format: 'html' }));
      expect(html.status).toBe(200);
      expect(html.text).toContain(`Dados de ${email}`);
      expect(html.text).toContain('2 leads guardados com este endereço.');
      expect(linked(html.text.slice(html.text.indexOf('<tbody>')))).toEqual([second.id, first.id]);
      const json = expectContract(await viewer.post(`/inbox/leads/${first.id}/access`, { format: 'json' }));
      expect(json.status).toBe(200);
      expect(json.headers['content-disposition']).toMatch(/^attachment; filename="dados-pessoais-\d{4}-\d{2}-\d{2}\.json"$/);
      const body = JSON.parse(json.text);
      expect(body.data.map((lead: Row) => lead.id)).toEqual([second.id, first.id]);
      expect(body.type).toBe('access');
      const audits = (await t.dataSource.query(`SELECT client_id FROM data_subject_requests WHERE type = 'access'`)) as Row[];
      expect(audits.filter((row) => row.client_id === `person:${viewer.userId}`)).toHaveLength(2);
    });

    it('erases only after the typed confirmation (422 otherwise, nothing erased); a marketer cannot (403)', async () => {
      const email = `apagar.${n}@empresa.example`;
      const lead = await stored('accepted', { email, emailFolded: email });
      const other = await stored('accepted', { email: `outra.${n}@empresa.example`, emailFolded: `outra.${n}@empresa.example` });
      expect(expectContract(await marketer.post(`/inbox/leads/${lead.id}/erase`, { confirmation: email })).status).toBe(403);
      for (const confirmation of ['', 'APAGAR', `outra.${n}@empresa.example`]) {
        const wrong = expectContract(await admin.post(`/inbox/leads/${lead.id}/erase`, { confirmation }));
        expect(wrong.status).toBe(422);
        expect(wrong.text).toContain('O texto digitado não é o e-mail do lead. Nada foi apagado.');
        expect(wrong.text).toContain('aria-invalid="true"');
      }
      expect(await rowOf(lead.id)).toBeDefined();
      expect(expectContract(await admin.post(`/inbox/leads/${lead.id}/erase`, {})).status).toBe(422);
      const done = expectContract(await admin.post(`/inbox/leads/${lead.id}/erase`, { confirmation: ` ${email.toUpperCase()} ` }));
      expect(done.status).toBe(303);
      expect(done.headers.location).toBe('/inbox/leads?erased=1');
      expect(await rowOf(lead.id)).toBeUndefined();
      expect(await rowOf(other.id)).toBeDefined();
      expect((await page(admin, done.headers.location)).text).toContain('Dados apagados: 1 lead(s).');
      expect(expectContract(await admin.post(`/inbox/leads/${lead.id}/erase`, { confirmation: email })).status).toBe(404);
      const [audit] = (await t.dataSource.query(
        `SELECT client_id FROM data_subject_requests WHERE type = 'erasure' ORDER BY requested_at DESC LIMIT 1`,
      )) as Row[];
      expect(audit.client_id).toBe(`person:${admin.userId}`);
    });
  });
});
