/** @database a person's own requests (issue 36): access, erasure, revocation by a code e-mailed to the address; the operators' queue */
import { Logger } from '@nestjs/common';
import { createLogger, NestPinoLogger } from '../src/logging/logger.js';
import { expectContract } from './support/contract.js';
import { expectProblem } from './support/problem.js';
import { eventually } from './support/eventually.js';
import { PeopleService } from '../src/people/people.service.js';
import { DataSubjectRequestsStore } from '../src/data-subject/data-subject-requests.store.js';
import { DataSubjectService } from '../src/data-subject/data-subject.service.js';
import { PrivacyRequestsService, RESUME_AFTER_MS } from '../src/privacy/privacy-requests.service.js';
import { codeOf, CookieJar, csrfOf, formBody, signedInAs } from './support/inbox-session.js';
import { operatorToken } from './support/operator-token.js';
import { CaptchaStub, TURNSTILE_TEST } from './support/captcha-stub.js';
import { SmtpSink } from './support/smtp-sink.js';
import { startTestApp, TestApp } from './support/test-app.js';

const DAY_MS = 86_400_000;
let counter = 0;
/** Every address and code the suite handles: none may reach a log line. */
const secrets = new Set<string>();
const address = (name: string) => {
  const email = `${name}.${process.pid}.${++counter}@pessoa.example.com.br`;
  secrets.add(email);
  return email;
};
const logged: string[] = [];
let clients = 0;

describe('privacy requests made by the person', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let reader: string;

  beforeAll(async () => {
    sink = await SmtpSink.start();
    t = await startTestApp({
      SMTP_URL: sink.url,
      WEBHOOK_POLL_INTERVAL: '20ms',
      TRUST_PROXY: '1',
      VERIFICATION_MAIL_DAILY_LIMIT: '1000',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
    });
    reader = await operatorToken(t, 'leads:read');
    Logger.overrideLogger(new NestPinoLogger(createLogger('debug', { write: (line: string) => void logged.push(line) })));
  });
  afterAll(async () => {
    await t.close();
    await sink.close();
  });

  /** Each call from a client address of its own, unless `from` names one: the per-client code limit is not the subject. */
  const ask = async (body: unknown, from = `203.0.113.${++clients % 250}`) =>
    expectContract(
      await t.http
        .post('/api/v1/privacy/requests')
        .set('X-Forwarded-For', from)
        .send(body as object),
    );
  const verify = async (id: string, code: unknown) => expectContract(await t.http.post(`/api/v1/privacy/requests/${id}/verify`).send({ code }));
  const download = async (id: string, token: string | null, query = '') => {
    let req = t.http.get(`/api/v1/privacy/requests/${id}/data${query}`);
    if (token !== null) req = req.set('Authorization', `Bearer ${token}`);
    return expectContract(await req);
  };
  const queue = async (query = '') => expectContract(await t.http.get(`/api/v1/data-subject-requests${query}`).set('Authorization', `Bearer ${reader}`));
  const lead = async (body: Record<string, unknown>) => {
    const res = expectContract(await t.http.post('/api/v1/lead').send(body));
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const mailTo = (email: string, count = 1) => eventually(() => (sink.to(email).length >= count ? sink.to(email)[count - 1] : undefined));
  const codeFor = async (email: string, count = 1) => {
    const code = codeOf((await mailTo(email, count)).parsed.text!);
    secrets.add(code);
    return code;
  };
  /** A wrong code for a right one: another six digits. */
  const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
  const started = async (type: string, email: string) => {
    const res = await ask({ type, email });
    expect(res.status).toBe(202);
    return res.body.id as string;
  };

  it('access: a code to the address, then at once the summary, the first page and an hour of downloads; the queue shows it due in 15 days', async () => {
    const email = address('acesso');
    const first = await lead({
      nome: 'Teresa Acesso',
      email,
      telefone: '(11) 98765-4321',
      origem: 'site',
      legal_bases: [{ category: 'communications', type: 'consent', status: 'granted' }],
      consent_text: 'Aceito receber comunicações.',
      context: { utm_source: 'newsletter' },
    });
    const second = await lead({ nome: 'Teresa Acesso', email: email.toUpperCase(), empresa: 'Padaria' });
    await lead({ nome: 'Outra Pessoa', email: address('outra') });
    // An endpoint that is sent leads, made after them: the summary names it as a recipient of people's data.
    const manager = await operatorToken(t, 'webhooks:manage');
    const endpoint = await t.http
      .post('/api/v1/webhooks')
      .set('Authorization', `Bearer ${manager}`)
      .send({ url: 'http://127.0.0.1:9/crm', events: ['lead.received'], description: 'CRM da empresa' });
    expect(endpoint.status).toBe(201);

    const res = await ask({ type: 'access', email: ` ${email.replace('acesso', 'ACESSO')} ` });
    expect(res.status).toBe(202);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(['expires_at', 'id', 'status']);
    expect(res.body.status).toBe('identity_unverified');
    const expiresIn = Date.parse(res.body.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(9 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(10 * 60_000);
    const id = res.body.id as string;

    const mail = await mailTo(email);
    expect(mail.parsed.subject).toMatch(/^Seu código para confirmar o pedido de privacidade: \d{6}$/);
    expect(mail.parsed.text).toContain('uma cópia dos dados');
    const code = await codeFor(email);

    // Not verified yet: hidden from the queue unless asked for.
    expect((await queue()).body.data.map((entry: { id: string }) => entry.id)).not.toContain(id);
    const unverified = (await queue('?status=identity_unverified')).body.data.find((entry: { id: string }) => entry.id === id);
    expect(unverified).toMatchObject({
      type: 'access',
      status: 'identity_unverified',
      channel: 'self_service',
      verified_at: null,
      due_at: null,
      completed_at: null,
    });
    expect(unverified.email_masked).toBe(`a***@pessoa.example.com.br`);

    const miss = await verify(id, wrong(code));
    expectProblem(miss, 400, 'verification_code_invalid');
    expect(miss.body.tries_left).toBe(4);

    const done = await verify(id, ` ${code} `);
    expect(done.status).toBe(200);
    expect(done.headers['cache-control']).toBe('no-store');
    expect(done.body).toMatchObject({ id, type: 'access', status: 'completed', next_cursor: null });
    expect(done.body.data.map((view: { id: string }) => view.id)).toEqual([second, first]);
    expect(done.body.consent_texts).toEqual([{ sha256: expect.any(String), text: 'Aceito receber comunicações.' }]);
    expect(done.body.summary).toEqual({
      holds_data: true,
      leads: 2,
      first_received_at: done.body.data[1].received_at,
      last_received_at: done.body.data[0].received_at,
      data_held: ['nome', 'email', 'telefone', 'empresa', 'attribution'],
      sources: expect.arrayContaining([
        { origem: 'site', channel: 'api', leads: 1 },
        { origem: null, channel: 'api', leads: 1 },
      ]),
      legal_bases: [{ category: 'communications', type: 'consent', status: 'granted', leads: 1 }],
      recipients: [{ kind: 'webhook_endpoint', name: 'CRM da empresa' }],
    });
    const token = done.body.download_token as string;
    secrets.add(token);
    expect(Date.parse(done.body.download_expires_at) - Date.now()).toBeGreaterThan(59 * 60_000);

    // Once: the code is spent, the answer was given.
    expectProblem(await verify(id, code), 409, 'privacy_request_verified');

    const page = await download(id, token);
    expect(page.status).toBe(200);
    expect(page.body.data.map((view: { id: string }) => view.id)).toEqual([second, first]);
    const csv = await download(id, token, '?format=csv');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.text).toContain(first);
    expect(csv.text).toContain(second);
    expect(csv.text).not.toContain('Outra Pessoa');
    expectProblem(await download(id, null), 401, 'download_token_invalid');
    const forged = await download(id, `${token.slice(0, -2)}AA`);
    expectProblem(forged, 401, 'download_token_invalid');
    expect(forged.headers['www-authenticate']).toContain('error="invalid_token"');

    const entry = (await queue()).body.data.find((row: { id: string }) => row.id === id);
    expect(entry).toMatchObject({ type: 'access', status: 'completed', channel: 'self_service', email_masked: 'a***@pessoa.example.com.br' });
    expect(Date.parse(entry.due_at) - Date.parse(entry.verified_at)).toBe(15 * DAY_MS);
    expect(Date.parse(entry.completed_at)).toBeGreaterThanOrEqual(Date.parse(entry.verified_at));
  });

  it('an address we hold nothing on gets the same answer and a code too; verified, it learns that we hold nothing', async () => {
    const known = address('conhecida');
    await lead({ nome: 'Pessoa Conhecida', email: known });
    const unknown = address('desconhecida');
    const [a, b] = [await ask({ type: 'access', email: known }), await ask({ type: 'access', email: unknown })];
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(Object.keys(a.body).sort()).toEqual(Object.keys(b.body).sort());
    expect([a.body.status, b.body.status]).toEqual(['identity_unverified', 'identity_unverified']);
    expect(Object.keys(a.headers).sort()).toEqual(Object.keys(b.headers).sort());
    const done = await verify(b.body.id, await codeFor(unknown));
    expect(done.status).toBe(200);
    expect(done.body.data).toEqual([]);
    expect(done.body.summary).toEqual({
      holds_data: false,
      leads: 0,
      first_received_at: null,
      last_received_at: null,
      data_held: [],
      sources: [],
      legal_bases: [],
      recipients: [],
    });
  });

  it('erasure: the verified request erases every lead of the address through the one erasure path', async () => {
    const email = address('apagar');
    const ids = [await lead({ nome: 'Apagar Um', email }), await lead({ nome: 'Apagar Dois', email })];
    const kept = await lead({ nome: 'Fica', email: address('fica') });
    const id = await started('erasure', email);
    const mail = await mailTo(email);
    expect(mail.parsed.text).toContain('eliminação');
    const done = await verify(id, await codeFor(email));
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ id, type: 'erasure', status: 'completed', counts: { leads: 2 } });
    const left = (await t.dataSource.query('SELECT id FROM leads')) as { id: string }[];
    expect(left.map((row) => row.id)).toContain(kept);
    expect(left.map((row) => row.id)).not.toEqual(expect.arrayContaining([ids[0]]));
    expect(left.map((row) => row.id)).not.toEqual(expect.arrayContaining([ids[1]]));
    const entry = (await queue()).body.data.find((row: { id: string }) => row.id === id);
    expect(entry).toMatchObject({ type: 'erasure', status: 'completed', channel: 'self_service' });
    // The sealed address is gone with the request done.
    const [row] = (await t.dataSource.query(`SELECT address_sealed FROM data_subject_requests WHERE id = '${id}'`)) as { address_sealed: string | null }[];
    expect(row.address_sealed).toBeNull();
  });

  /** A verified erasure whose run failed (the database went away after the verification committed), and its lead. */
  const stuckErasure = async (name: string) => {
    const email = address(name);
    const leadId = await lead({ nome: 'Retoma Depois', email });
    const id = await started('erasure', email);
    const code = await codeFor(email);
    const failed = jest.spyOn(t.app.get(DataSubjectService), 'eraseAll').mockRejectedValueOnce(new Error('the database went away'));
    let calls: number;
    try {
      expectProblem(await verify(id, code), 500, 'internal_error');
    } finally {
      calls = failed.mock.calls.length;
      failed.mockRestore();
    }
    // It failed after the verification committed: the request is verified, its work not done.
    expect(calls).toBe(1);
    expect((await queue('?status=verified')).body.data.find((row: { id: string }) => row.id === id)).toMatchObject({ status: 'verified' });
    return { id, code, stored: async () => ((await t.dataSource.query(`SELECT id FROM leads WHERE id = '${leadId}'`)) as unknown[]).length };
  };
  const stillAfter = (ms: number) => Date.now() + ms + 1000;

  it('a verified erasure whose run failed half-way is carried out minutes later by one instance, its address kept until then', async () => {
    const { id, code, stored } = await stuckErasure('retoma');
    expect(await stored()).toBe(1);
    // Asked again, the request says what is happening rather than that it is done.
    const again = await verify(id, code);
    expectProblem(again, 409, 'privacy_request_verified');
    expect(again.body.detail).toMatch(/being carried out/);
    const privacy = t.app.get(PrivacyRequestsService);
    // Not before the verifying instance has had its time: it may still be at it.
    expect(await privacy.resume(Date.now())).not.toContain(id);
    expect(await stored()).toBe(1);
    // Past the hour after which an unused address is forgotten, this one is kept: the work still needs it.
    await t.app.get(DataSubjectRequestsStore).forgetAddresses(Date.now() + 2 * 3_600_000, 1000);
    // Two instances looking at once: one takes it up, the other leaves it.
    const looks = await Promise.all([privacy.resume(stillAfter(RESUME_AFTER_MS)), privacy.resume(stillAfter(RESUME_AFTER_MS))]);
    expect(looks.flat().filter((done) => done === id)).toHaveLength(1);
    expect(await stored()).toBe(0);
    const entry = (await queue('?status=completed')).body.data.find((row: { id: string }) => row.id === id);
    expect(entry).toMatchObject({ type: 'erasure', status: 'completed', channel: 'self_service' });
    const [row] = (await t.dataSource.query(`SELECT counts, address_sealed FROM data_subject_requests WHERE id = '${id}'`)) as {
      counts: string;
      address_sealed: string | null;
    }[];
    expect(JSON.parse(row.counts)).toMatchObject({ leads: 1 });
    expect(row.address_sealed).toBeNull();
    expect(await privacy.resume(stillAfter(2 * RESUME_AFTER_MS))).not.toContain(id);
    expectProblem(await verify(id, code), 409, 'privacy_request_verified');
  });

  it('a request that fails again holds up no other, and is tried again after its wait', async () => {
    const first = await stuckErasure('falha');
    const second = await stuckErasure('segue');
    const privacy = t.app.get(PrivacyRequestsService);
    const failing = jest.spyOn(t.app.get(DataSubjectService), 'eraseAll').mockRejectedValueOnce(new Error('still failing'));
    let look: string[];
    try {
      look = await privacy.resume(stillAfter(RESUME_AFTER_MS));
    } finally {
      failing.mockRestore();
    }
    // The older one failed again; the one after it was carried out in the same look.
    expect(look).toContain(second.id);
    expect(look).not.toContain(first.id);
    expect([await first.stored(), await second.stored()]).toEqual([1, 0]);
    // Taken up by that look, it waits its turn again, then goes.
    expect(await privacy.resume(stillAfter(RESUME_AFTER_MS))).not.toContain(first.id);
    expect(await privacy.resume(stillAfter(2 * RESUME_AFTER_MS + 1000))).toContain(first.id);
    expect(await first.stored()).toBe(0);
  });

  it('consent revocation: every granted communications consent of the address declined', async () => {
    const email = address('revogar');
    const leadId = await lead({ nome: 'Revoga', email, legal_bases: [{ category: 'communications', type: 'consent', status: 'granted' }] });
    const res = await ask({ type: 'consent_revocation', email, language: 'en' });
    const mail = await mailTo(email);
    expect(mail.parsed.subject).toMatch(/^Your code to confirm your privacy request: \d{6}$/);
    expect(mail.parsed.text).toContain('stop sending communications');
    const done = await verify(res.body.id, await codeFor(email));
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ type: 'consent_revocation', status: 'completed', counts: { leads: 1, revoked: 1 } });
    const view = expectContract(await t.http.get(`/api/v1/leads/${leadId}`).set('Authorization', `Bearer ${reader}`));
    expect(view.body.legal_bases[0]).toMatchObject({ category: 'communications', status: 'declined', revoked_at: done.body.revoked_at });
  });

  it('the fifth wrong code locks the request: the right code is refused after it, and nothing is done', async () => {
    const email = address('tranca');
    const leadId = await lead({ nome: 'Tranca', email });
    const id = await started('erasure', email);
    const code = await codeFor(email);
    for (let left = 4; left > 0; left--) expect((await verify(id, wrong(code))).body.tries_left).toBe(left);
    expectProblem(await verify(id, wrong(code)), 409, 'privacy_request_locked');
    expectProblem(await verify(id, code), 409, 'privacy_request_locked');
    expect(await t.dataSource.query(`SELECT id FROM leads WHERE id = '${leadId}'`)).toHaveLength(1);
    const entry = (await queue('?status=locked')).body.data.find((row: { id: string }) => row.id === id);
    expect(entry).toMatchObject({ status: 'locked', verified_at: null });
  });

  it('a code past its 10 minutes is refused (410), and the request shows as expired', async () => {
    const email = address('expira');
    const id = await started('access', email);
    const code = await codeFor(email);
    const past = Date.now() - 1000;
    await t.dataSource.query(`UPDATE data_subject_requests SET expires_at = ${past} WHERE id = '${id}'`);
    await t.dataSource.query(`UPDATE verification_codes SET expires_at = ${past} WHERE subject = '${id}'`);
    expectProblem(await verify(id, code), 410, 'privacy_request_expired');
    expect((await queue('?status=expired')).body.data.find((row: { id: string }) => row.id === id)).toMatchObject({ status: 'expired' });
    expect((await queue('?status=identity_unverified')).body.data.map((row: { id: string }) => row.id)).not.toContain(id);
  });

  it('refuses what it cannot act on: bad bodies (422), unknown or malformed ids (404), a fourth code for one address in an hour (429)', async () => {
    const bad = await ask({ type: 'everything', email: 'not an address', extra: 1 });
    expectProblem(bad, 422, 'validation_failed');
    expect(bad.body.errors.map((e: { pointer: string; code: string }) => [e.pointer, e.code])).toEqual([
      ['/extra', 'unknown_field'],
      ['/email', 'invalid_format'],
      ['/type', 'invalid_value'],
    ]);
    expectProblem(await ask({ type: 'access', email: 'a@example.com', language: 'fr' }), 422, 'validation_failed');
    expectProblem(await verify('019ac600-0000-7000-8000-000000000001', '123456'), 404, 'privacy_request_not_found');
    expectProblem(await verify('not-an-id', '123456'), 404, 'privacy_request_not_found');
    const missingCode = expectContract(await t.http.post('/api/v1/privacy/requests/019ac600-0000-7000-8000-000000000001/verify').send({}));
    expectProblem(missingCode, 422, 'validation_failed');

    const email = address('muitos');
    for (let i = 0; i < 3; i++) expect((await ask({ type: 'access', email })).status).toBe(202);
    const fourth = await ask({ type: 'access', email });
    expectProblem(fourth, 429, 'verification_rate_limited');
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(0);
    await eventually(() => (sink.to(email).length === 3 ? true : undefined));
  });

  it('the queue lists operators’ requests too, newest first, in keyset pages; its filters are checked', async () => {
    const eraser = await operatorToken(t, 'leads:erase');
    const email = address('operador');
    const made = expectContract(await t.http.post('/api/v1/data-subject-requests/consent-revocation').set('Authorization', `Bearer ${eraser}`).send({ email }));
    expect(made.status).toBe(200);
    const first = await queue('?limit=1');
    expect(first.body.data).toEqual([
      expect.objectContaining({
        id: made.body.request_id,
        channel: 'operator',
        status: 'completed',
        type: 'consent_revocation',
        email_masked: 'o***@pessoa.example.com.br',
      }),
    ]);
    const next = await queue(`?limit=1&cursor=${first.body.next_cursor}`);
    expect(next.body.data).toHaveLength(1);
    expect(next.body.data[0].id < made.body.request_id).toBe(true);
    expectProblem(await queue('?status=pending'), 400, 'invalid_query');
    expectProblem(await queue('?cursor=bm90LWFuLWlk'), 400, 'invalid_query');
    const anonymous = expectContract(await t.http.get('/api/v1/data-subject-requests'));
    expectProblem(anonymous, 401, 'authentication_required');
  });

  it('the inbox shows the same queue to a person who reads leads: masked, with due dates, in their language', async () => {
    const email = address('caixa');
    const id = await started('consent_revocation', email);
    expect((await verify(id, await codeFor(email))).status).toBe(200);
    const viewer = await signedInAs(t, 'viewer');
    const page = expectContract(await viewer.get('/inbox/requests'));
    expect(page.status).toBe(200);
    expect(page.text).toContain('Pedidos de titulares');
    expect(page.text).toContain('c***@pessoa.example.com.br');
    expect(page.text).toContain('A própria pessoa');
    expect(page.text).not.toContain(email);
    const english = expectContract(await viewer.get('/inbox/requests?status=locked').set('Accept-Language', 'en'));
    expect(english.text).toContain('Data-subject requests');
    expect(english.text).not.toContain('c***@pessoa.example.com.br');
    const broken = expectContract(await viewer.get('/inbox/requests?cursor=bm9wZQ'));
    expect([broken.status, broken.text.includes('role="alert"')]).toEqual([200, true]);
    expect(expectContract(await t.http.get('/inbox/requests')).status).toBe(303);
  });

  describe('against an attacker (docs/decisions/0040, "Attacks")', () => {
    it('codes anyone can ask for never lock a person out of the inbox: the limits count each purpose apart', async () => {
      const email = address('operadora');
      await t.app.get(PeopleService).add(email, 'admin');
      for (let i = 0; i < 3; i++) expect((await ask({ type: 'access', email })).status).toBe(202);
      expectProblem(await ask({ type: 'access', email }), 429, 'verification_rate_limited');
      const jar = new CookieJar();
      const signIn = await t.http.get('/inbox/sign-in').set('X-Forwarded-For', '198.51.100.77');
      jar.take(signIn);
      const code = await t.http
        .post('/inbox/sign-in')
        .set('X-Forwarded-For', '198.51.100.77')
        .set('Cookie', jar.header)
        .type('form')
        .send(formBody({ _csrf: csrfOf(signIn.text), email }));
      expect([code.status, code.text.includes('name="code"')]).toEqual([200, true]);
    });

    it('a +tag is the same mailbox: its codes share the address limit', async () => {
      const email = address('etiqueta');
      const tagged = (tag: string) => email.replace('@', `+${tag}@`);
      for (const tag of ['a', 'b', 'c']) expect((await ask({ type: 'erasure', email: tagged(tag) })).status).toBe(202);
      expectProblem(await ask({ type: 'erasure', email: tagged('d') }), 429, 'verification_rate_limited');
      expectProblem(await ask({ type: 'erasure', email }), 429, 'verification_rate_limited');
    });

    it('new codes buy no new guesses: after ten wrong tries in a day an address gets no code', async () => {
      const email = address('adivinha');
      for (let round = 0; round < 2; round++) {
        const id = await started('erasure', email);
        const code = await codeFor(email, round + 1);
        for (let i = 0; i < 5; i++) await verify(id, wrong(code));
      }
      expectProblem(await ask({ type: 'erasure', email }), 429, 'verification_rate_limited');
    });

    it('the right code sent twice at once is carried out once, and never locks the request', async () => {
      const email = address('duplo');
      await lead({ nome: 'Duplo Clique', email });
      const id = await started('erasure', email);
      const code = await codeFor(email);
      const answers = await Promise.all([verify(id, code), verify(id, code), verify(id, code)]);
      expect(answers.map((res) => res.status).sort()).toEqual([200, 409, 409]);
      for (const res of answers.filter((answer) => answer.status === 409)) expect(res.body.code).toBe('privacy_request_verified');
      const entry = (await queue('?status=completed')).body.data.find((row: { id: string }) => row.id === id);
      expect(entry).toMatchObject({ status: 'completed' });
    });

    it("no other site's page may call the API from its visitors' browsers", async () => {
      const preflight = await t.http
        .options('/api/v1/privacy/requests')
        .set('Origin', 'https://evil.example')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'content-type');
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      const lead = await t.http.options('/api/v1/lead').set('Origin', 'https://site.example').set('Access-Control-Request-Method', 'POST');
      expect(lead.headers['access-control-allow-origin']).toBe('*');
    });
  });

  it('no address, code or download token reaches a log line', () => {
    const text = logged.join('\n').toLowerCase();
    for (const secret of secrets) expect([secret, text.includes(secret.toLowerCase())]).toEqual([secret, false]);
  });
});

describe('privacy requests with a captcha provider', () => {
  let t: TestApp;
  let siteverify: CaptchaStub;

  beforeAll(async () => {
    siteverify = await CaptchaStub.start({ hostname: 'leads.test' });
    t = await startTestApp({
      CAPTCHA_PROVIDER: 'turnstile',
      CAPTCHA_SECRET: TURNSTILE_TEST.secretPasses,
      CAPTCHA_SITE_KEY: TURNSTILE_TEST.siteKeyPasses,
      CAPTCHA_VERIFY_URL: siteverify.turnstileVerifyUrl,
      CAPTCHA_SCRIPT_URL: 'https://widget.example/turnstile/v0/api.js?render=explicit',
    });
  });
  afterAll(async () => {
    await t.close();
    await siteverify.close();
  });

  it('the public start needs a passing captcha token, from the API (Captcha-Token) and from the page (its widget field)', async () => {
    const body = { type: 'access', email: 'captcha.pessoa@example.com' };
    expectProblem(expectContract(await t.http.post('/api/v1/privacy/requests').send(body)), 403, 'captcha_failed');
    expectProblem(expectContract(await t.http.post('/api/v1/privacy/requests').set('Captcha-Token', 'not-the-token').send(body)), 403, 'captcha_failed');
    const passed = expectContract(await t.http.post('/api/v1/privacy/requests').set('Captcha-Token', TURNSTILE_TEST.dummyToken).send(body));
    expect(passed.status).toBe(202);

    const page = expectContract(await t.http.get('/privacy'));
    expect(page.text).toContain(`<div class="cf-turnstile" data-sitekey="${TURNSTILE_TEST.siteKeyPasses}"></div>`);
    // The widget renders itself (no render=explicit, no script of ours), and only this page lets its script and frame in.
    expect(page.text).toContain('<script src="https://widget.example/turnstile/v0/api.js" async defer></script>');
    expect(page.headers['content-security-policy']).toContain("script-src 'self' https://widget.example");
    expect(page.headers['content-security-policy']).toContain('frame-src https://widget.example');
    const form = (fields: Record<string, string>) =>
      t.http
        .post('/privacy')
        .set('Origin', 'http://leads.test')
        .type('form')
        .send({ type: 'access', email: 'captcha.pagina@example.com', lang: 'pt-BR', ...fields });
    const refused = expectContract(await form({}));
    expect([refused.status, refused.text.includes('não é um robô')]).toEqual([403, true]);
    const sent = expectContract(await form({ 'cf-turnstile-response': TURNSTILE_TEST.dummyToken }));
    expect([sent.status, sent.text.includes('name="code"')]).toEqual([200, true]);
  });
});
