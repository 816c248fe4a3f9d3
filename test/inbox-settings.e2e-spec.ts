/** @database the inbox's settings pages: people and roles, notification recipients, webhook endpoints, operator API clients */
import { createHmac } from 'node:crypto';
import { Logger } from '@nestjs/common';
import request from 'supertest';
import type { Response } from 'supertest';
import { createLogger, NestPinoLogger } from '../src/logging/logger.js';
import { PeopleService } from '../src/people/people.service.js';
import type { Role } from '../src/people/roles.js';
import { expectContract } from './support/contract.js';
import { InboxPerson, signedInAs } from './support/inbox-session.js';
import { until } from './support/recipient-steps.js';
import { SmtpSink } from './support/smtp-sink.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/**
 * The settings pages as a person drives them over HTTP (the browser suite drives them in Chromium): each page and
 * action, what it stores, the mail and webhooks it makes go out, a created client's secret at the token endpoint, and
 * the same scope checks as the API's (a viewer's or marketer's POST to an admin action is 403, and changes nothing).
 * Every answer is checked against the contract.
 */

const logged: string[] = [];
const HTML = 'text/html; charset=utf-8';

/** A person of the inbox as the pages see them; every answer checked against the contract. */
class Person {
  constructor(
    readonly session: InboxPerson,
    private readonly http: TestApp['http'],
  ) {}

  get email(): string {
    return this.session.email;
  }

  async get(path: string, language?: string): Promise<Response> {
    return expectContract(await (language ? this.http.get(path).set({ Cookie: this.session.cookie, 'Accept-Language': language }) : this.session.get(path)));
  }

  async post(path: string, fields: Record<string, string | string[]> = {}): Promise<Response> {
    return expectContract(await this.session.post(path, fields));
  }
}

/** The text of a page without its tags, spaces collapsed: what a person reads. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

describe('inbox settings', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let admin: Person;
  let marketer: Person;
  let viewer: Person;
  let seq = 0;
  const address = (name: string) => `${name}.${++seq}@empresa.example`;

  const signedIn = async (role: Role) => new Person(await signedInAs(t, role, address(role)), t.http);

  /** A query with `?` placeholders, on either database. */
  const rows = (sql: string, params: unknown[] = []) => {
    let n = 0;
    return t.dataSource.query(t.dataSource.options.type === 'postgres' ? sql.replace(/\?/g, () => `$${++n}`) : sql, params);
  };

  beforeAll(async () => {
    sink = await SmtpSink.start();
    receiver = await WebhookReceiver.start();
    t = await startTestApp({ SMTP_URL: sink.url, WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_INTERVAL: '20ms', CLIENT_SECRET_GRACE: '0' });
    Logger.overrideLogger(new NestPinoLogger(createLogger('info', { write: (line: string) => void logged.push(line) })));
    admin = await signedIn('admin');
    marketer = await signedIn('marketer');
    viewer = await signedIn('viewer');
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
    await sink.close();
  });

  describe('the index', () => {
    it('lists what each role may manage', async () => {
      const links = async (person: Person) => {
        const res = await person.get('/inbox/settings');
        expect([res.status, res.headers['content-type']]).toEqual([200, HTML]);
        return [...res.text.matchAll(/href="\/inbox\/settings\/([a-z]+)"/g)].map((match) => match[1]);
      };
      expect(await links(admin)).toEqual(['people', 'recipients', 'webhooks', 'clients']);
      expect(await links(marketer)).toEqual(['recipients']);
      expect(await links(viewer)).toEqual([]);
      expect(textOf((await viewer.get('/inbox/settings')).text)).toContain('Não há configurações que o seu papel possa alterar.');
      expect(textOf((await viewer.get('/inbox/settings', 'en')).text)).toContain('There are no settings your role may change.');
    });

    it('sends a browser without a session to sign in, and back', async () => {
      const res = expectContract(await request(t.app.getHttpServer()).get('/inbox/settings/webhooks'));
      expect([res.status, res.headers.location]).toEqual([303, '/inbox/sign-in?return=%2Finbox%2Fsettings%2Fwebhooks']);
    });
  });

  describe('people and roles', () => {
    const people = () => rows('SELECT email, role FROM inbox_people ORDER BY email');

    it('lets an admin add a person with a role, change it, and remove them, which ends their sessions at once', async () => {
      const colleague = await signedIn('viewer');
      expect((await colleague.get('/inbox/settings')).status).toBe(200);
      const [{ id }] = await rows('SELECT id FROM inbox_people WHERE email = ?', [colleague.email]);

      await admin.get('/inbox/settings/people');
      const added = await admin.post('/inbox/settings/people', { email: 'Bia@Empresa.example', role: 'marketer' });
      expect([added.status, added.headers.location]).toEqual([303, '/inbox/settings/people?notice=added']);
      expect(await people()).toContainEqual({ email: 'Bia@empresa.example', role: 'marketer' });
      const page = await admin.get(added.headers.location);
      expect(textOf(page.text)).toContain('Pessoa adicionada.');
      expect(page.text).toContain('Bia@empresa.example');

      const changed = await admin.post(`/inbox/settings/people/${id}/role`, { role: 'marketer' });
      expect([changed.status, changed.headers.location]).toEqual([303, '/inbox/settings/people?notice=role']);
      expect(await rows('SELECT role FROM inbox_people WHERE id = ?', [id])).toEqual([{ role: 'marketer' }]);
      // The new role counts from the colleague's next request.
      expect((await colleague.get('/inbox/settings/recipients')).status).toBe(200);

      const removed = await admin.post(`/inbox/settings/people/${id}/remove`);
      expect([removed.status, removed.headers.location]).toEqual([303, '/inbox/settings/people?notice=removed']);
      expect(await rows('SELECT id FROM inbox_people WHERE id = ?', [id])).toEqual([]);
      expect(await rows('SELECT person_id FROM inbox_sessions WHERE person_id = ?', [id])).toEqual([]);
      const after = await colleague.get('/inbox/settings');
      expect(after.status).toBe(303);
      expect(after.headers.location).toMatch(/^\/inbox\/sign-in/);
    });

    it('answers the page again, the form kept and the field marked, for a bad address or one already there', async () => {
      await admin.get('/inbox/settings/people');
      const bad = await admin.post('/inbox/settings/people', { email: 'not an address', role: 'viewer' });
      expect(bad.status).toBe(422);
      expect(bad.text).toMatch(/id="person-email" name="email" type="email"[^>]*value="not an address" aria-invalid="true"/);
      const twice = await admin.post('/inbox/settings/people', { email: marketer.email.toUpperCase(), role: 'viewer' });
      expect(twice.status).toBe(409);
      expect(textOf(twice.text)).toContain('Já existe uma pessoa com este endereço.');
    });

    it('keeps the last admin: an admin cannot remove or demote the last one', async () => {
      const [{ id }] = await rows('SELECT id FROM inbox_people WHERE email = ?', [admin.email]);
      await admin.get('/inbox/settings/people');
      const removed = await admin.post(`/inbox/settings/people/${id}/remove`);
      expect(removed.status).toBe(409);
      expect(textOf(removed.text)).toContain('É preciso haver ao menos uma pessoa administradora');
      const demoted = await admin.post(`/inbox/settings/people/${id}/role`, { role: 'viewer' });
      expect(demoted.status).toBe(409);
      expect(await rows('SELECT role FROM inbox_people WHERE id = ?', [id])).toEqual([{ role: 'admin' }]);
    });

    it('keeps one admin when the last two demote each other at the same instant: one 303, the other the last-admin 409', async () => {
      const other = await signedIn('admin');
      const idOf = async (person: Person) => String((await rows('SELECT id FROM inbox_people WHERE email = ?', [person.email]))[0].id);
      const [adminId, otherId] = [await idOf(admin), await idOf(other)];
      await Promise.all([admin.get('/inbox/settings/people'), other.get('/inbox/settings/people')]);
      const answers = await Promise.all([
        admin.post(`/inbox/settings/people/${otherId}/role`, { role: 'viewer' }),
        other.post(`/inbox/settings/people/${adminId}/role`, { role: 'viewer' }),
      ]);
      // The loser's request is refused as the last admin's (409), or, read after the winner's change, as a viewer's (403).
      expect([
        [303, 403],
        [303, 409],
      ]).toContainEqual(answers.map((res) => res.status).sort());
      const refused = answers.find((res) => res.status === 409);
      if (refused) expect(textOf(refused.text)).toContain('É preciso haver ao menos uma pessoa administradora');
      expect(await rows("SELECT email FROM inbox_people WHERE role = 'admin'")).toHaveLength(1);
      // The one still an admin makes the other one again, for the tests below.
      const [winner, loserId] = answers[0].status === 303 ? [admin, otherId] : [other, adminId];
      await winner.get('/inbox/settings/people');
      expect((await winner.post(`/inbox/settings/people/${loserId}/role`, { role: 'admin' })).status).toBe(303);
      // The same race where the requests cannot serialise it: the two changes in flight together, in the store.
      const people = t.app.get(PeopleService);
      expect((await Promise.all([people.setRole(adminId, 'viewer'), people.remove(otherId)])).sort()).toEqual(['done', 'last_admin']);
      expect(await rows("SELECT email FROM inbox_people WHERE role = 'admin'")).toHaveLength(1);
      if ((await rows('SELECT id FROM inbox_people WHERE id = ?', [otherId])).length === 1) await people.setRole(adminId, 'admin');
      expect(await rows('SELECT role FROM inbox_people WHERE id = ?', [adminId])).toEqual([{ role: 'admin' }]);
      await people.remove(otherId);
    });

    it('refuses every people page and action to a marketer and a viewer (403), changing nothing', async () => {
      const before = await people();
      const [{ id }] = await rows('SELECT id FROM inbox_people WHERE email = ?', [admin.email]);
      for (const person of [marketer, viewer]) {
        await person.get('/inbox/settings');
        expect((await person.get('/inbox/settings/people')).status).toBe(403);
        expect((await person.post('/inbox/settings/people', { email: 'intruso@fora.example', role: 'admin' })).status).toBe(403);
        expect((await person.post(`/inbox/settings/people/${id}/role`, { role: 'viewer' })).status).toBe(403);
        expect((await person.post(`/inbox/settings/people/${id}/remove`)).status).toBe(403);
      }
      expect(await people()).toEqual(before);
    });
  });

  describe('notification recipients', () => {
    it('lets a marketer add a recipient, who gets the confirmation e-mail; resend it; remove the recipient', async () => {
      const email = address('vendas');
      await marketer.get('/inbox/settings/recipients');
      const added = await marketer.post('/inbox/settings/recipients', { email, mode: 'daily_digest', language: 'en', include_personal_data: 'true' });
      expect([added.status, added.headers.location]).toEqual([303, '/inbox/settings/recipients?notice=added']);
      const [stored] = await rows('SELECT id, mode, language, status FROM notification_recipients WHERE email = ?', [email]);
      expect(stored).toEqual({ id: expect.any(String), mode: 'daily_digest', language: 'en', status: 'pending' });
      const confirmation = await until('the confirmation e-mail', () => sink.to(email)[0]);
      expect(confirmation.parsed.text).toMatch(/\/notifications\/confirm\?token=/);

      const page = await marketer.get(added.headers.location);
      expect(textOf(page.text)).toContain('Destinatário adicionado; o e-mail de confirmação está a caminho.');
      expect(textOf(page.text)).toContain(`${email} Resumo diário Inglês sim aguardando confirmação`);

      const resent = await marketer.post(`/inbox/settings/recipients/${stored.id}/resend`);
      expect([resent.status, resent.headers.location]).toEqual([303, '/inbox/settings/recipients?notice=resent']);
      await until('the second confirmation e-mail', () => (sink.to(email).length === 2 ? true : undefined));

      const removed = await marketer.post(`/inbox/settings/recipients/${stored.id}/remove`);
      expect([removed.status, removed.headers.location]).toEqual([303, '/inbox/settings/recipients?notice=removed']);
      expect(await rows('SELECT id FROM notification_recipients WHERE email = ?', [email])).toEqual([]);
    });

    it('answers the page again for a bad address, an address already there, and a fourth confirmation e-mail in a day', async () => {
      const email = address('limite');
      await marketer.get('/inbox/settings/recipients');
      const bad = await marketer.post('/inbox/settings/recipients', { email: 'sem-arroba', mode: 'immediate' });
      expect(bad.status).toBe(422);
      expect(bad.text).toContain('value="sem-arroba" aria-invalid="true"');
      expect((await marketer.post('/inbox/settings/recipients', { email, mode: 'immediate' })).status).toBe(303);
      const twice = await marketer.post('/inbox/settings/recipients', { email, mode: 'immediate' });
      expect(twice.status).toBe(409);
      expect(textOf(twice.text)).toContain('Já existe um destinatário com este endereço.');
      const [{ id }] = await rows('SELECT id FROM notification_recipients WHERE email = ?', [email]);
      expect((await marketer.post(`/inbox/settings/recipients/${id}/resend`)).status).toBe(303);
      expect((await marketer.post(`/inbox/settings/recipients/${id}/resend`)).status).toBe(303);
      const fourth = await marketer.post(`/inbox/settings/recipients/${id}/resend`);
      expect(fourth.status).toBe(429);
      expect(textOf(fourth.text)).toContain('Este endereço já recebeu 3 e-mails de confirmação nas últimas 24 horas.');
    });

    it('refuses a viewer (403), adding nothing', async () => {
      await viewer.get('/inbox/settings');
      expect((await viewer.get('/inbox/settings/recipients')).status).toBe(403);
      expect((await viewer.post('/inbox/settings/recipients', { email: 'x@fora.example', mode: 'immediate' })).status).toBe(403);
      expect(await rows("SELECT id FROM notification_recipients WHERE email = 'x@fora.example'")).toEqual([]);
    });
  });

  describe('webhook endpoints', () => {
    /** Whether a delivery carries a signature by this secret (Standard Webhooks). */
    const signedBy = (delivery: { headers: Record<string, unknown>; body: string }, secret: string) => {
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      const mac = createHmac('sha256', key)
        .update(`${delivery.headers['webhook-id']}.${delivery.headers['webhook-timestamp']}.${delivery.body}`)
        .digest('base64');
      return String(delivery.headers['webhook-signature']).split(' ').includes(`v1,${mac}`);
    };

    it('lets an admin create an endpoint (its secret shown once), test it, see the delivery, send it again, rotate the secret, disable it', async () => {
      await admin.get('/inbox/settings/webhooks');
      const created = await admin.post('/inbox/settings/webhooks', { url: receiver.url, description: 'CRM <b>', events: ['lead.received', 'lead.held'] });
      expect([created.status, created.headers['cache-control']]).toEqual([200, 'no-store']);
      const secret = /<code id="webhook-secret">(whsec_[A-Za-z0-9+/=]+)<\/code>/.exec(created.text)![1];
      const [endpoint] = await rows('SELECT id, url, events, description, secret FROM webhook_endpoints');
      expect(endpoint).toMatchObject({ url: receiver.url, events: '["lead.received","lead.held"]', description: 'CRM <b>' });
      expect(endpoint.secret).not.toContain(secret.slice(6));
      expect(created.text).toContain(`href="/inbox/settings/webhooks/${endpoint.id}"`);

      const page = await admin.get(`/inbox/settings/webhooks/${endpoint.id}`);
      expect(page.text).not.toContain(secret);
      expect(page.text).toContain('CRM &lt;b&gt;');

      const tested = await admin.post(`/inbox/settings/webhooks/${endpoint.id}/test`);
      expect([tested.status, tested.headers.location]).toEqual([303, `/inbox/settings/webhooks/${endpoint.id}?notice=test`]);
      const [test] = await receiver.waitFor(1);
      expect(JSON.parse(test.body)).toMatchObject({ type: 'webhook.test' });
      expect(signedBy(test, secret)).toBe(true);

      const shown = await until('the delivery on the page', async () => {
        const res = await admin.get(tested.headers.location);
        return textOf(res.text).includes('entregue') ? res : undefined;
      });
      expect(textOf(shown.text)).toContain('Mensagem de teste (webhook.test) a caminho.');
      const messageId = /name="message_id" value="(msg_[0-9a-f]{32})"/.exec(shown.text)![1];
      expect(messageId).toBe(test.headers['webhook-id']);

      const replayed = await admin.post(`/inbox/settings/webhooks/${endpoint.id}/replay`, { message_id: messageId });
      expect([replayed.status, replayed.headers.location]).toEqual([303, `/inbox/settings/webhooks/${endpoint.id}?notice=replayed&count=1`]);
      const [, again] = await receiver.waitFor(2);
      expect(again.headers['webhook-id']).toBe(messageId);
      expect(textOf((await admin.get(replayed.headers.location)).text)).toContain('Mensagens enviadas de novo: 1.');

      const rotated = await admin.post(`/inbox/settings/webhooks/${endpoint.id}/rotate`);
      expect([rotated.status, rotated.headers['cache-control']]).toEqual([200, 'no-store']);
      const next = /<code id="webhook-secret">(whsec_[A-Za-z0-9+/=]+)<\/code>/.exec(rotated.text)![1];
      expect(next).not.toBe(secret);
      await admin.post(`/inbox/settings/webhooks/${endpoint.id}/test`);
      const [, , third] = await receiver.waitFor(3);
      expect([signedBy(third, next), signedBy(third, secret)]).toEqual([true, true]);

      const disabled = await admin.post(`/inbox/settings/webhooks/${endpoint.id}/status`, { status: 'disabled' });
      expect(disabled.headers.location).toBe(`/inbox/settings/webhooks/${endpoint.id}?notice=disabled`);
      expect(await rows('SELECT status FROM webhook_endpoints WHERE id = ?', [endpoint.id])).toEqual([{ status: 'disabled' }]);
      const enabled = await admin.post(`/inbox/settings/webhooks/${endpoint.id}/status`, { status: 'enabled' });
      expect(enabled.headers.location).toBe(`/inbox/settings/webhooks/${endpoint.id}?notice=enabled`);
    });

    it('marks a URL the API refuses, keeping what was typed (escaped)', async () => {
      await admin.get('/inbox/settings/webhooks');
      const typed = 'ftp://x.example/"><script>alert(1)</script>';
      const res = await admin.post('/inbox/settings/webhooks', { url: typed, events: ['lead.received'] });
      expect(res.status).toBe(422);
      expect(res.text).not.toContain('<script>alert(1)</script>');
      expect(res.text).toContain('value="ftp://x.example/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" aria-invalid="true"');
      expect(textOf(res.text)).toMatch(/URL : deve começar com https:\/\/\./);
    });

    it('shows 404 for an endpoint that does not exist', async () => {
      expect((await admin.get('/inbox/settings/webhooks/00000000-0000-7000-8000-000000000000')).status).toBe(404);
    });

    it('refuses a marketer every webhook page and action (403)', async () => {
      const [endpoint] = await rows('SELECT id, secret FROM webhook_endpoints');
      await marketer.get('/inbox/settings');
      expect((await marketer.get('/inbox/settings/webhooks')).status).toBe(403);
      expect((await marketer.post('/inbox/settings/webhooks', { url: receiver.url, events: ['lead.received'] })).status).toBe(403);
      expect((await marketer.post(`/inbox/settings/webhooks/${endpoint.id}/rotate`)).status).toBe(403);
      expect(await rows('SELECT id, secret FROM webhook_endpoints')).toEqual([endpoint]);
    });
  });

  describe('operator API clients', () => {
    const token = (clientId: string, secret: string) =>
      t.http.post('/oauth2/token').type('form').send({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret });
    const credentials = (res: Response) => ({
      clientId: /<code id="client-id">(op_[A-Za-z0-9_-]+)<\/code>/.exec(res.text)![1],
      secret: /<code id="client-secret">([A-Za-z0-9_-]{43})<\/code>/.exec(res.text)![1],
    });

    it('shows a new client’s id and secret once; the secret gets a token that reads leads; rotate ends it; revoke ends the client', async () => {
      await admin.get('/inbox/settings/clients');
      const created = await admin.post('/inbox/settings/clients', { name: 'CRM <sync>', scope: ['leads:read', 'leads:export'] });
      expect([created.status, created.headers['cache-control']]).toEqual([200, 'no-store']);
      const { clientId, secret } = credentials(created);
      expect(await rows('SELECT name, scopes, revoked_at FROM operator_clients WHERE client_id = ?', [clientId])).toEqual([
        { name: 'CRM <sync>', scopes: 'leads:read leads:export', revoked_at: null },
      ]);

      const issued = await token(clientId, secret);
      expect([issued.status, issued.body.scope]).toEqual([200, 'leads:read leads:export']);
      const read = await t.http.get('/api/v1/leads').set('Authorization', `Bearer ${issued.body.access_token}`);
      expect(read.status).toBe(200);

      const list = await admin.get('/inbox/settings/clients');
      expect(list.text).toContain('CRM &lt;sync&gt;');
      expect(list.text).toContain(clientId);
      expect(list.text).not.toContain(secret);

      const rotated = await admin.post(`/inbox/settings/clients/${clientId}/rotate`);
      expect([rotated.status, rotated.headers['cache-control']]).toEqual([200, 'no-store']);
      const next = credentials(rotated);
      expect(next.clientId).toBe(clientId);
      expect((await token(clientId, secret)).status).toBe(401);
      const renewed = await token(clientId, next.secret);
      expect(renewed.status).toBe(200);

      const revoked = await admin.post(`/inbox/settings/clients/${clientId}/revoke`);
      expect([revoked.status, revoked.headers.location]).toEqual([303, '/inbox/settings/clients?notice=revoked']);
      expect((await token(clientId, next.secret)).status).toBe(401);
      expect((await t.http.get('/api/v1/leads').set('Authorization', `Bearer ${renewed.body.access_token}`)).status).toBe(401);
      expect((await admin.post(`/inbox/settings/clients/${clientId}/rotate`)).status).toBe(404);
    });

    it('answers the page again for a client without a name or scopes', async () => {
      await admin.get('/inbox/settings/clients');
      const res = await admin.post('/inbox/settings/clients', { name: ' ' });
      expect(res.status).toBe(422);
      expect(textOf(res.text)).toContain('Dê um nome ao cliente');
      expect(textOf(res.text)).toContain('Escolha ao menos uma permissão.');
    });

    it('refuses a marketer and a viewer (403): no client is made, rotated or revoked', async () => {
      const [live] = await rows('SELECT client_id, secret_hash FROM operator_clients WHERE revoked_at IS NULL');
      const before = await rows('SELECT client_id, secret_hash, revoked_at FROM operator_clients ORDER BY client_id');
      for (const person of [marketer, viewer]) {
        await person.get('/inbox/settings');
        expect((await person.get('/inbox/settings/clients')).status).toBe(403);
        expect((await person.post('/inbox/settings/clients', { name: 'Intruso', scope: 'leads:read' })).status).toBe(403);
        if (live) {
          expect((await person.post(`/inbox/settings/clients/${live.client_id}/rotate`)).status).toBe(403);
          expect((await person.post(`/inbox/settings/clients/${live.client_id}/revoke`)).status).toBe(403);
        }
      }
      expect(await rows('SELECT client_id, secret_hash, revoked_at FROM operator_clients ORDER BY client_id')).toEqual(before);
    });

    it('refuses a form without its CSRF token (403)', async () => {
      await admin.get('/inbox/settings/clients');
      const res = await admin.post('/inbox/settings/clients', { name: 'Sem token', scope: 'leads:read', _csrf: 'forged' });
      expect(res.status).toBe(403);
      expect(await rows("SELECT client_id FROM operator_clients WHERE name = 'Sem token'")).toEqual([]);
    });
  });

  it('writes an audit line per change naming the person by user id, and never a secret, an address or a URL', async () => {
    const lines = logged.map((line) => JSON.parse(line) as Record<string, unknown>);
    const audit = lines.filter((line) => line.audit === 'inbox_settings');
    const [{ id: adminId }] = await rows('SELECT id FROM inbox_people WHERE email = ?', [admin.email]);
    expect(audit.map((line) => line.action)).toEqual(
      expect.arrayContaining([
        'recipient_added',
        'webhook_created',
        'webhook_tested',
        'webhook_replayed',
        'webhook_secret_rotated',
        'client_created',
        'client_revoked',
      ]),
    );
    expect(audit.find((line) => line.action === 'client_created')).toMatchObject({ user_id: adminId, client_id: expect.stringMatching(/^op_/) });
    // People's changes are audited by src/people/ (PeopleService), naming the admin who made them.
    expect(lines.filter((line) => line.audit === 'person_added' && line.by === adminId)).toHaveLength(1);
    expect(lines.filter((line) => line.audit === 'person_removed' && line.by === adminId)).toHaveLength(1);
    const text = logged.join('\n');
    expect(text).not.toMatch(/whsec_|@empresa\.example|127\.0\.0\.1:\d+\/hook/i);
  });
});
