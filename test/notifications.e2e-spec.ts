/** @database lead notifications by e-mail: recipients, confirmation by POST, one-click unsubscribe, the e-mail channel */
import { Logger } from '@nestjs/common';
import type { Response } from 'supertest';
import { createLogger, NestPinoLogger } from '../src/logging/logger.js';
import { expectContract } from './support/contract.js';
import { operatorToken } from './support/operator-token.js';
import { SmtpSink, SunkMail } from './support/smtp-sink.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * Lead notifications by e-mail (docs/decisions/0036-notification-recipients.md) against a real SMTP server in the test
 * (smtp-server; messages parsed with mailparser): the recipients API, a confirmation that only a POST makes, one
 * e-mail per accepted lead with its headers, retries of a 4xx, a 5xx marking the address, one-click unsubscribe, the
 * daily cap on confirmation e-mails, and nothing for held leads. Every response is checked against the contract.
 */

const BASE = 'http://leads.test';
const FAST = { EMAIL_RETRY_SCHEDULE: '50ms,50ms,50ms', WEBHOOK_POLL_INTERVAL: '20ms' };
const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const LINK = (path: string) => new RegExp(`${BASE.replaceAll('.', '\\.')}${path}\\?token=[A-Za-z0-9_-]+`);

function expectProblem(res: Response, status: number, code: string): void {
  expect([res.status, res.body.code]).toEqual([status, code]);
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
}

async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A header as the message carries it (unfolded), or undefined. */
function header(mail: SunkMail, name: string): string | undefined {
  const line = mail.parsed.headerLines.find((entry) => entry.key === name.toLowerCase())?.line;
  return line
    ?.slice(name.length + 1)
    .replace(/\r?\n\s+/g, ' ')
    .trim();
}

/** Every line the service's loggers write during the suite, at debug and above. */
const logged: string[] = [];
/** Every address, name and telephone number the suite gives the service. */
const personal = new Set<string>([
  'Beatriz Lima',
  'beatriz@cliente.example.com.br',
  '98765-4321',
  'someone@mailinator.com',
  'Daniela Prado',
  'daniela@cliente.example.com',
  '99876-5432',
  'Carlos Souza',
]);

let counter = 0;
/** A fresh address per test: each has its own daily cap of confirmation e-mails. */
const address = (name: string) => {
  const email = `${name}.${process.pid}.${++counter}@equipe.example.com`;
  personal.add(email.toLowerCase());
  return email;
};

describe('notifications', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let manager: string;

  const call = (method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object, token: string | null = manager) => {
    let req = t.http[method](path);
    if (token !== null) req = req.set('Authorization', `Bearer ${token}`);
    return (body === undefined ? req : req.send(body)).then(expectContract);
  };
  const create = async (email: string, extra: object = {}) => {
    const res = await call('post', '/api/v1/notification-recipients', { email, mode: 'immediate', ...extra });
    expect(res.status).toBe(201);
    return res.body as { id: string; email: string; status: string };
  };
  const recipient = async (id: string) => (await call('get', `/api/v1/notification-recipients/${id}`)).body;
  /** The confirmation e-mail number `n` (from 1) to this address, once it arrived. */
  const confirmationMail = (email: string, n = 1) =>
    eventually(() => {
      const mails = sink.to(email).filter((mail) => LINK('/notifications/confirm').test(mail.parsed.text ?? ''));
      return mails.length >= n ? mails[n - 1] : undefined;
    });
  const tokenOf = (mail: SunkMail, path: string) => new URL(LINK(path).exec(mail.parsed.text ?? '')![0]).searchParams.get('token')!;
  const confirmByPost = (token: string, headers: Record<string, string> = {}) =>
    t.http.post('/notifications/confirm').set(headers).type('form').send({ token }).then(expectContract);
  /** A recipient whose address confirmed, through its e-mail's page. */
  const confirmed = async (email: string, extra: object = {}) => {
    const created = await create(email, extra);
    const res = await confirmByPost(tokenOf(await confirmationMail(email), '/notifications/confirm'), { Accept: HTML });
    expect(res.status).toBe(200);
    expect((await recipient(created.id)).status).toBe('confirmed');
    return created;
  };
  const lead = async (body: object = {}) => {
    const res = await t.http
      .post('/api/v1/lead')
      .send({
        nome: 'Beatriz Lima',
        email: 'beatriz@cliente.example.com.br',
        telefone: '+55 11 98765-4321',
        empresa: 'Lima Ltda',
        mensagem: 'Quero uma proposta',
        ...body,
      })
      .then(expectContract);
    expect(res.status).toBe(201);
    return res.body as { id: string };
  };
  const leadMails = (email: string, leadId: string) => sink.to(email).filter((mail) => (mail.parsed.text ?? '').includes(leadId));
  const deliveries = async (id: string) => (await call('get', `/api/v1/notification-recipients/${id}/deliveries`)).body.data as Record<string, unknown>[];

  beforeAll(async () => {
    sink = await SmtpSink.start();
    t = await startTestApp({ ...FAST, SMTP_URL: sink.url });
    manager = await operatorToken(t, 'notifications:manage');
    // After the application's start, which installs its own (silent here) logger.
    Logger.overrideLogger(new NestPinoLogger(createLogger('debug', { write: (line: string) => void logged.push(line) })));
  });
  afterAll(async () => {
    await t.close();
    await sink.close();
  });

  it('sends a confirmation e-mail whose link opens a page: the GET leaves the address pending, the page’s POST confirms, once', async () => {
    const email = address('Vendas');
    const created = await create(email);
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email,
      mode: 'immediate',
      language: 'pt-BR',
      include_personal_data: true,
      status: 'pending',
      status_reason: null,
      permanent_failures: 0,
      confirmation_expires_at: expect.any(String),
      confirmed_at: null,
      unsubscribed_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(
      Date.parse((created as unknown as { confirmation_expires_at: string }).confirmation_expires_at) -
        Date.parse((created as unknown as { created_at: string }).created_at),
    ).toBe(7 * 24 * 3_600_000);

    const mail = await confirmationMail(email);
    expect(mail.parsed.to).toMatchObject({ value: [{ address: email }] });
    expect(mail.parsed.messageId).toMatch(new RegExp(`^<msg_[0-9a-f]{32}\\.${created.id}@leads\\.test>$`));
    expect(header(mail, 'List-Unsubscribe')).toMatch(new RegExp(`^<${LINK('/notifications/unsubscribe').source}>$`));
    expect(header(mail, 'List-Unsubscribe-Post')).toBeUndefined();
    expect(header(mail, 'Auto-Submitted')).toBe('auto-generated');
    expect(mail.parsed.html).toEqual(expect.any(String));
    const token = tokenOf(mail, '/notifications/confirm');

    // What a mail scanner does: open the link. A page with the confirm form first, and nothing changes.
    const page = await t.http.get(`/notifications/confirm?token=${token}`).set('Accept', HTML).then(expectContract);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['referrer-policy']).toBe('same-origin');
    expect(page.text.match(/<form[^>]*>/)![0]).toBe(`<form method="post" action="${BASE}/notifications/confirm">`);
    expect(page.text).toContain(`<input type="hidden" name="token" value="${token}">`);
    expect(page.text).not.toMatch(/<script/i);
    expect((await recipient(created.id)).status).toBe('pending');

    // Another site's page posting the form is refused.
    expectProblem(await confirmByPost(token, { Origin: 'https://evil.example' }), 403, 'origin_not_allowed');
    expectProblem(await confirmByPost(token, { Origin: 'null' }), 403, 'origin_not_allowed');
    expect((await recipient(created.id)).status).toBe('pending');

    const done = await confirmByPost(token, { Origin: BASE, Accept: HTML });
    expect(done.status).toBe(200);
    expect(done.text).toMatch(/Endereço confirmado[\s\S]*Address confirmed/);
    expect(await recipient(created.id)).toMatchObject({ status: 'confirmed', confirmed_at: expect.any(String), confirmation_expires_at: null });

    // Single use: a second POST, and the link itself, now say the link is not valid (a page to a browser).
    expectProblem(await confirmByPost(token), 404, 'notification_link_invalid');
    const again = await t.http.get(`/notifications/confirm?token=${token}`).set('Accept', HTML).then(expectContract);
    expect([again.status, again.text.includes('<form')]).toEqual([200, false]);
    expect(again.text).toMatch(/Link inválido/);
    expectProblem(await t.http.get('/notifications/confirm?token=nope').then(expectContract), 404, 'notification_link_invalid');
    expectProblem(await t.http.get('/notifications/confirm').then(expectContract), 404, 'notification_link_invalid');
  });

  it('sends each accepted lead once to a confirmed recipient: To, Reply-To, Message-ID, List-Unsubscribe (one-click), text and HTML', async () => {
    const email = address('comercial');
    const { id } = await confirmed(email);
    const first = await lead();
    const second = await lead({ nome: 'Carlos Souza', email: 'carlos@cliente.example.com' });
    const [mail] = await eventually(() => (leadMails(email, first.id).length ? leadMails(email, first.id) : undefined));
    await eventually(() => (leadMails(email, second.id).length ? true : undefined));

    expect(mail.parsed.to).toMatchObject({ value: [{ address: email }] });
    expect(mail.parsed.replyTo).toMatchObject({ value: [{ address: 'beatriz@cliente.example.com.br' }] });
    expect(mail.parsed.messageId).toMatch(new RegExp(`^<msg_[0-9a-f]{32}\\.${id}@leads\\.test>$`));
    expect(header(mail, 'List-Unsubscribe')).toMatch(new RegExp(`^<${LINK('/notifications/unsubscribe').source}>$`));
    expect(header(mail, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect(mail.parsed.subject).toContain('Beatriz Lima');
    for (const part of [mail.parsed.text ?? '', mail.parsed.html || '']) {
      for (const value of ['Beatriz Lima', 'beatriz@cliente.example.com.br', 'Lima Ltda', 'Quero uma proposta']) expect(part).toContain(value);
    }
    // Delivered: the log says so, and there is one e-mail per lead.
    await eventually(async () =>
      (await deliveries(id)).filter((line) => line.event_type === 'lead.received' && line.outcome === 'succeeded').length === 2 ? true : undefined,
    );
    expect([leadMails(email, first.id).length, leadMails(email, second.id).length]).toEqual([1, 1]);
  });

  it('gives a recipient without personal data only the lead’s id and link, and no Reply-To', async () => {
    const email = address('anonimo');
    await confirmed(email, { include_personal_data: false, language: 'en' });
    const { id } = await lead({ nome: 'Daniela Prado', email: 'daniela@cliente.example.com', telefone: '+55 21 99876-5432', empresa: 'Prado SA' });
    const [mail] = await eventually(() => (leadMails(email, id).length ? leadMails(email, id) : undefined));
    expect(mail.parsed.replyTo).toBeUndefined();
    expect(mail.parsed.text).toContain(`${BASE}/api/v1/leads/${id}`);
    for (const value of ['Daniela', 'Prado', 'daniela@', '99876', 'Quero uma proposta']) {
      expect(mail.raw).not.toContain(value);
    }
  });

  it('retries a 451 and delivers the lead exactly once', async () => {
    const email = address('retry');
    const { id } = await confirmed(email);
    sink.answer(email, { code: 451, message: 'Try again later' }, 'accept');
    const created = await lead();
    await eventually(() => (leadMails(email, created.id).length ? true : undefined));
    const log = await eventually(async () => {
      const lines = (await deliveries(id)).filter((line) => line.event_type === 'lead.received');
      return lines.some((line) => line.outcome === 'succeeded') ? lines : undefined;
    });
    expect(log.map((line) => [line.attempt, line.outcome, line.status_code])).toEqual([
      [2, 'succeeded', 250],
      [1, 'failed', 451],
    ]);
    expect(log[1].next_attempt_at).toEqual(expect.any(String));
    expect(leadMails(email, created.id)).toHaveLength(1);
  });

  it('marks an address that answers 550: the third in a row makes it bouncing, with the code and not the address', async () => {
    const email = address('bounce');
    const { id } = await confirmed(email);
    sink.answer(email, { code: 550, message: `5.1.1 <${email}>: Recipient address rejected` });
    for (let n = 1; n <= 3; n++) {
      const test = await call('post', `/api/v1/notification-recipients/${id}/test`);
      expect(test.status).toBe(202);
      expect(test.body).toEqual({ message_id: expect.stringMatching(/^msg_[0-9a-f]{32}$/), event_type: 'notification.test' });
      const failed = await eventually(async () => {
        const lines = await (await call('get', `/api/v1/notification-recipients/${id}/deliveries?message_id=${test.body.message_id}`)).body.data;
        return lines.length ? lines : undefined;
      });
      expect(failed).toMatchObject([{ outcome: 'failed', status_code: 550, next_attempt_at: null }]);
      expect(JSON.stringify(failed)).not.toContain(email);
      const now = await eventually(async () => {
        const r = await recipient(id);
        return r.permanent_failures === n ? r : undefined;
      });
      expect(now.status).toBe(n < 3 ? 'confirmed' : 'bouncing');
    }
    const bouncing = await recipient(id);
    expect(bouncing.status_reason).toBe('3 permanent failures in a row; the last: SMTP 550 5.1.1.');
    expectProblem(await call('post', `/api/v1/notification-recipients/${id}/test`), 409, 'notification_recipient_not_confirmed');

    // The way back: a new confirmation, pending, its failures forgotten.
    sink.answer(email, 'accept');
    const resent = await call('post', `/api/v1/notification-recipients/${id}/resend-confirmation`);
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ status: 'pending', status_reason: null, permanent_failures: 0 });
    await confirmationMail(email, 2);
  });

  it('unsubscribes by RFC 8058 one-click POST with no cookie; the GET only shows the button; no more mail after', async () => {
    const email = address('unsub');
    const witness = address('witness');
    const { id } = await confirmed(email);
    await confirmed(witness);
    const first = await lead();
    const [mail] = await eventually(() => (leadMails(email, first.id).length ? leadMails(email, first.id) : undefined));
    const url = new URL(header(mail, 'List-Unsubscribe')!.slice(1, -1));
    const path = `${url.pathname}${url.search}`;

    const page = await t.http.get(path).set('Accept', HTML).then(expectContract);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<form method="post" action="${BASE}${path}">`);
    expect(page.text).toContain('<input type="hidden" name="List-Unsubscribe" value="One-Click">');
    expect((await recipient(id)).status).toBe('confirmed');

    expectProblem(await t.http.post(path).type('form').send('List-Unsubscribe=Two-Clicks').then(expectContract), 400, 'invalid_form');
    expectProblem(await t.http.post(path).send({ 'List-Unsubscribe': 'One-Click' }).then(expectContract), 400, 'invalid_form');
    const done = await t.http.post(path).type('form').send('List-Unsubscribe=One-Click').then(expectContract);
    expect(done.status).toBe(200);
    expect(done.text).toMatch(/Inscrição cancelada[\s\S]*Unsubscribed/);
    expect(await recipient(id)).toMatchObject({
      status: 'unsubscribed',
      unsubscribed_at: expect.any(String),
      status_reason: expect.stringContaining('unsubscribed'),
    });
    expect((await t.http.post(path).type('form').send('List-Unsubscribe=One-Click').then(expectContract)).status).toBe(200);

    // The witness gets the next lead; by then the unsubscribed address would have had its copy.
    const next = await lead();
    await eventually(() => (leadMails(witness, next.id).length ? true : undefined));
    expect(leadMails(email, next.id)).toHaveLength(0);

    // Altered or foreign tokens: the same answer as a deleted recipient's.
    const altered = `${url.pathname}?token=${url.searchParams.get('token')!.slice(0, -2)}AA`;
    expectProblem(await t.http.post(altered).type('form').send('List-Unsubscribe=One-Click').then(expectContract), 404, 'notification_link_invalid');
    expect((await call('delete', `/api/v1/notification-recipients/${id}`)).status).toBe(204);
    expectProblem(await t.http.post(path).type('form').send('List-Unsubscribe=One-Click').then(expectContract), 404, 'notification_link_invalid');
    const gone = await t.http.get(path).set('Accept', HTML).then(expectContract);
    expect([gone.status, gone.text.includes('<form')]).toEqual([200, false]);
  });

  it('unsubscribes by the multipart/form-data one-click body RFC 8058 asks mail receivers to send', async () => {
    const email = address('multipart');
    const { id } = await confirmed(email);
    // Another body: identical ones from one address in a burst are held (screening), and later tests send the default.
    const first = await lead({ mensagem: 'Uma proposta, por favor' });
    const [mail] = await eventually(() => (leadMails(email, first.id).length ? leadMails(email, first.id) : undefined));
    const url = new URL(header(mail, 'List-Unsubscribe')!.slice(1, -1));
    const path = `${url.pathname}${url.search}`;

    expectProblem(await t.http.post(path).field('List-Unsubscribe', 'Two-Clicks').then(expectContract), 400, 'invalid_form');
    expectProblem(
      await t.http.post(path).field('List-Unsubscribe', 'One-Click').field('List-Unsubscribe', 'One-Click').then(expectContract),
      400,
      'invalid_form',
    );
    expectProblem(await t.http.post(path).attach('List-Unsubscribe', Buffer.from('One-Click'), 'x.txt').then(expectContract), 400, 'invalid_form');
    expect((await recipient(id)).status).toBe('confirmed');
    const done = await t.http.post(path).field('List-Unsubscribe', 'One-Click').then(expectContract);
    expect(done.status).toBe(200);
    expect((await recipient(id)).status).toBe('unsubscribed');
  });

  it('sends a new confirmation, back to pending, whose link replaces the last; never for a confirmed address', async () => {
    const email = address('resend');
    const created = await create(email);
    const oldToken = tokenOf(await confirmationMail(email), '/notifications/confirm');
    const resent = await call('post', `/api/v1/notification-recipients/${created.id}/resend-confirmation`);
    expect(resent.status).toBe(200);
    expect(resent.body.status).toBe('pending');
    const newToken = tokenOf(await confirmationMail(email, 2), '/notifications/confirm');
    expect(newToken).not.toBe(oldToken);
    expectProblem(await confirmByPost(oldToken), 404, 'notification_link_invalid');
    expect((await confirmByPost(newToken, { Accept: HTML })).status).toBe(200);
    expectProblem(await call('post', `/api/v1/notification-recipients/${created.id}/resend-confirmation`), 409, 'notification_recipient_confirmed');
  });

  it('sends an address at most 3 confirmation e-mails a day, whatever the way: the 4th is a 429 with Retry-After', async () => {
    const email = address('flood');
    const { id } = await create(email);
    await confirmationMail(email, 1);
    for (let n = 2; n <= 3; n++) {
      expect((await call('post', `/api/v1/notification-recipients/${id}/resend-confirmation`)).status).toBe(200);
      await confirmationMail(email, n);
    }
    const refused = await call('post', `/api/v1/notification-recipients/${id}/resend-confirmation`);
    expectProblem(refused, 429, 'confirmation_rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Deleted and created again, in another letter case: the same address, the same count.
    expect((await call('delete', `/api/v1/notification-recipients/${id}`)).status).toBe(204);
    expectProblem(
      await call('post', '/api/v1/notification-recipients', {
        email: email.toUpperCase().replace('@EQUIPE.EXAMPLE.COM', '@equipe.example.com'),
        mode: 'immediate',
      }),
      429,
      'confirmation_rate_limited',
    );
    // A sub-address reaches the same mailbox: another recipient, but no more confirmation e-mails today.
    const tagged = email.replace('@', '+again@');
    personal.add(tagged.toLowerCase());
    expectProblem(await call('post', '/api/v1/notification-recipients', { email: tagged, mode: 'immediate' }), 429, 'confirmation_rate_limited');
    expect(sink.to(email)).toHaveLength(3);
  });

  it('sends nothing for a held lead until a person releases it', async () => {
    const email = address('held');
    await confirmed(email);
    const held = await lead({ email: 'someone@mailinator.com' });
    const [{ screening_verdict: verdict }] = await t.dataSource.query(`SELECT screening_verdict FROM leads WHERE id = '${held.id}'`);
    expect(verdict).toBe('held');
    const accepted = await lead();
    await eventually(() => (leadMails(email, accepted.id).length ? true : undefined));
    expect(leadMails(email, held.id)).toHaveLength(0);

    // A person releases it: then it is announced, and told.
    const screener = await operatorToken(t, 'leads:screen');
    const released = await t.http
      .post(`/api/v1/leads/${held.id}/screening`)
      .set('Authorization', `Bearer ${screener}`)
      .send({ verdict: 'accepted' })
      .then(expectContract);
    expect(released.status).toBe(200);
    await eventually(() => (leadMails(email, held.id).length ? true : undefined));
    expect(leadMails(email, held.id)).toHaveLength(1);
  });

  it('refuses callers without notifications:manage, and bad input with problems', async () => {
    expectProblem(await call('get', '/api/v1/notification-recipients', undefined, null), 401, 'authentication_required');
    const reader = await operatorToken(t, 'leads:read');
    expectProblem(await call('post', '/api/v1/notification-recipients', { email: address('x'), mode: 'immediate' }, reader), 403, 'insufficient_scope');

    const invalid = await call('post', '/api/v1/notification-recipients', { email: 'not an address', mode: 'weekly', language: 'fr', extra: true });
    expectProblem(invalid, 422, 'validation_failed');
    expect(invalid.body.errors.map((e: { pointer: string; code: string }) => [e.pointer, e.code])).toEqual([
      ['/extra', 'unknown_field'],
      ['/email', 'invalid_format'],
      ['/mode', 'invalid_value'],
      ['/language', 'invalid_value'],
    ]);
    expectProblem(await call('post', '/api/v1/notification-recipients', [1] as unknown as object), 400, 'body_not_object');
    expectProblem(
      await t.http.post('/api/v1/notification-recipients').set('Authorization', `Bearer ${manager}`).type('form').send('email=a@b.com').then(expectContract),
      415,
      'unsupported_media_type',
    );

    const email = address('dup');
    const { id } = await create(email);
    const duplicate = await call('post', '/api/v1/notification-recipients', {
      email: email.toUpperCase().replace('@EQUIPE.EXAMPLE.COM', '@equipe.example.com'),
      mode: 'daily_digest',
    });
    expectProblem(duplicate, 409, 'notification_recipient_exists');
    expect(duplicate.body.recipient_id).toBe(id);
    expectProblem(await call('post', `/api/v1/notification-recipients/${id}/test`), 409, 'notification_recipient_not_confirmed');
    expect((await call('patch', `/api/v1/notification-recipients/${id}`, {})).body.errors).toEqual([
      expect.objectContaining({ pointer: '', code: 'empty_patch' }),
    ]);
    const patched = await call('patch', `/api/v1/notification-recipients/${id}`, { mode: 'daily_digest', include_personal_data: false });
    expect(patched.body).toMatchObject({ id, mode: 'daily_digest', include_personal_data: false, status: 'pending' });
    expect(await recipient(id)).toEqual(patched.body);

    for (const bad of ['not-a-uuid', '00000000-0000-7000-8000-000000000000', '%00'])
      expectProblem(await call('get', `/api/v1/notification-recipients/${bad}`), 404, 'notification_recipient_not_found');
    expectProblem(await call('get', '/api/v1/notification-recipients?limit=0'), 400, 'invalid_query');
    expectProblem(await call('get', '/api/v1/notification-recipients?cursor=bm9wZQ'), 400, 'invalid_query');
    expectProblem(await call('get', `/api/v1/notification-recipients/${id}/deliveries?message_id=x`), 400, 'invalid_query');
    expectProblem(await call('get', `/api/v1/notification-recipients/${id}/deliveries?cursor=bm9wZQ`), 400, 'invalid_query');
    expectProblem(await t.http.post('/notifications/confirm').type('form').send('token=a&token=b').then(expectContract), 400, 'invalid_form');
    expectProblem(await t.http.post('/notifications/confirm').send({ token: 'x' }).then(expectContract), 400, 'invalid_form');
    expectProblem(await t.http.post('/notifications/confirm').type('form').send('other=1').then(expectContract), 400, 'invalid_form');
    for (const token of ['x'.repeat(5000), '%00', '../../x', 'a b'])
      expectProblem(await t.http.get(`/notifications/unsubscribe?token=${token}`).then(expectContract), 404, 'notification_link_invalid');
  });

  it('answers the public pages without a 5xx whatever they are sent', async () => {
    const tokens = ['', '%00', '%FF%FE', 'é'.repeat(40), 'A'.repeat(64), 'A'.repeat(128), '-'.repeat(43), 'x&token=y', '%5B%5D'];
    const bodies: [string, string | Buffer][] = [
      ['application/x-www-form-urlencoded', ''],
      ['application/x-www-form-urlencoded', 'token'],
      ['application/x-www-form-urlencoded', Buffer.from([0xff, 0xfe, 0x3d, 0x00])],
      ['application/x-www-form-urlencoded; charset=latin1', 'token=abc'],
      ['application/x-www-form-urlencoded', 'List-Unsubscribe=One-Click&List-Unsubscribe=One-Click'],
      ['application/x-www-form-urlencoded', `token=${'A'.repeat(20_000)}`],
      ['text/plain', 'List-Unsubscribe=One-Click'],
      ['application/json', '{"token":'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="token"\r\n\r\nabc\r\n--x--'],
    ];
    for (const path of ['/notifications/confirm', '/notifications/unsubscribe']) {
      for (const token of tokens) {
        for (const accept of [HTML, '*/*']) {
          const res = await t.http.get(`${path}?token=${token}`).set('Accept', accept).then(expectContract);
          expect(res.status).toBeLessThan(500);
        }
        for (const [type, body] of bodies) {
          const res = await t.http.post(`${path}?token=${token}`).set('Content-Type', type).send(body).then(expectContract);
          expect(res.status).toBeLessThan(500);
        }
      }
    }
  });

  it('lists recipients in keyset pages, oldest first, and deletes one with its log', async () => {
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push((await create(address('page'))).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: Response = await call('get', `/api/v1/notification-recipients?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((r: { id: string }) => r.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...seen].sort());
    expect(seen).toEqual(expect.arrayContaining(ids));

    await eventually(async () => ((await deliveries(ids[0])).length ? true : undefined));
    expect((await call('delete', `/api/v1/notification-recipients/${ids[0]}`)).status).toBe(204);
    expectProblem(await call('get', `/api/v1/notification-recipients/${ids[0]}/deliveries`), 404, 'notification_recipient_not_found');
    const [{ n }] = await t.dataSource.query(`SELECT COUNT(*) AS n FROM webhook_attempts WHERE endpoint_id = '${ids[0]}'`);
    expect(Number(n)).toBe(0);
  });

  // Last: it reads what the tests above made the service log.
  it('wrote no address, name or telephone number to the logs', () => {
    const text = logged.join('').toLowerCase();
    expect(text).toContain('notification recipient created');
    expect(text).toContain('delivery attempt failed');
    expect(text).toContain('subscriber disabled');
    expect([...personal].filter((value) => text.includes(value.toLowerCase()))).toEqual([]);
    expect(text).not.toContain('@equipe.example.com');
  });
});
