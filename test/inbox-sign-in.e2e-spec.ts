/** @database sign-in by a code sent by e-mail (issue 35): verification limits, cap, expiry and tries; sessions; redirects */
import { Logger } from '@nestjs/common';
import { createLogger, NestPinoLogger } from '../src/logging/logger.js';
import { PeopleService } from '../src/people/people.service.js';
import type { Role } from '../src/people/roles.js';
import { expectContract } from './support/contract.js';
import { eventually } from './support/eventually.js';
import { codeOf, CookieJar, csrfOf, formBody, signedInAs } from './support/inbox-session.js';
import { SmtpSink } from './support/smtp-sink.js';
import { startTestApp, TestApp } from './support/test-app.js';

let counter = 0;
/** Every address, code and session id the suite handles: none may reach a log line. */
const secrets = new Set<string>();
const address = (name: string) => {
  const email = `${name}.${process.pid}.${++counter}@empresa.example.com.br`;
  secrets.add(email);
  return email;
};
const logged: string[] = [];
let clients = 0;

describe('inbox sign-in', () => {
  let t: TestApp;
  let sink: SmtpSink;

  beforeAll(async () => {
    sink = await SmtpSink.start();
    t = await startTestApp({ SMTP_URL: sink.url, WEBHOOK_POLL_INTERVAL: '20ms', TRUST_PROXY: '1', VERIFICATION_MAIL_DAILY_LIMIT: '100' });
    Logger.overrideLogger(new NestPinoLogger(createLogger('debug', { write: (line: string) => void logged.push(line) })));
  });
  afterAll(async () => {
    await t.close();
    await sink.close();
  });

  const sql = (text: string) =>
    t.dataSource.options.type === 'postgres' ? text.replace(/\?/g, (_, i: number) => `$${text.slice(0, i).split('?').length}`) : text;
  const person = async (role: Role, email = address(role)) => {
    const added = await t.app.get(PeopleService).add(email, role);
    if (!added.added) throw new Error(added.reason);
    return added.person;
  };

  /** A browser (its own client address) at the sign-in page: it keeps its cookies and the latest page's token. */
  async function browser(options: { language?: string; returnPath?: string } = {}) {
    const jar = new CookieJar();
    const headers: Record<string, string> = {
      'X-Forwarded-For': `198.51.100.${++clients}`,
      ...(options.language ? { 'Accept-Language': options.language } : {}),
    };
    const page = expectContract(
      await t.http.get(`/inbox/sign-in${options.returnPath ? `?return=${encodeURIComponent(options.returnPath)}` : ''}`).set(headers),
    );
    jar.take(page);
    let csrf = csrfOf(page.text);
    return {
      jar,
      page,
      headers,
      async post(path: string, fields: Record<string, string>) {
        const res = expectContract(
          await t.http
            .post(path)
            .set(headers)
            .set('Cookie', jar.header)
            .type('form')
            .send(formBody({ _csrf: csrf, ...fields })),
        );
        jar.take(res);
        if (res.text.includes('name="csrf-token"')) csrf = csrfOf(res.text);
        return res;
      },
      get: (path: string) => t.http.get(path).set(headers).set('Cookie', jar.header),
      /** Opens a page as the browser would: its cookies and its token kept. */
      async visit(path: string) {
        const res = await t.http.get(path).set(headers).set('Cookie', jar.header);
        jar.take(res);
        csrf = csrfOf(res.text);
        return res;
      },
    };
  }

  const mailTo = (email: string, count = 1) => eventually(() => (sink.to(email).length >= count ? sink.to(email)[count - 1] : undefined));
  const codeFor = async (email: string, count = 1) => {
    const code = codeOf((await mailTo(email, count)).parsed.text!);
    secrets.add(code);
    return code;
  };

  it('signs a person in by the code mailed to them (pt-BR), with a new session id, landing on the return path', async () => {
    const email = address('ana');
    const ana = await person('marketer', email);
    const b = await browser({ returnPath: '/inbox/held?q=x' });
    expect(b.page.text).toContain('<input type="hidden" name="return" value="/inbox/held?q=x">');
    // A session this browser already has (planted by someone else, say) is not the one it ends up with (fixation).
    const planted = await signedInAs(t, 'viewer');
    b.jar.set('inbox_session', planted.cookie.split('=')[1]);
    await b.visit('/inbox/sign-in?return=%2Finbox%2Fheld%3Fq%3Dx');
    const codePage = await b.post('/inbox/sign-in', { email, return: '/inbox/held?q=x' });
    expect(codePage.status).toBe(200);
    expect(codePage.text).toMatch(/<input id="code" name="code" type="text" autocomplete="one-time-code" inputmode="numeric"/);
    expect([codePage.headers['set-cookie']].flat().join('\n')).toMatch(/^inbox_attempt=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=600$/m);
    const mail = await mailTo(email);
    const code = await codeFor(email);
    expect(mail.parsed.subject).toBe(`Seu código de acesso: ${code}`);
    expect(mail.parsed.text!.startsWith(`${code} é o seu código de acesso`)).toBe(true);
    expect(mail.parsed.html).toContain(code);
    const signedIn = await b.post('/inbox/sign-in/code', { code, return: '/inbox/held?q=x' });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.location).toBe('/inbox/held?q=x');
    const session = b.jar.get('inbox_session')!;
    secrets.add(session);
    expect(session).not.toBe(planted.cookie.split('=')[1]);
    expect([signedIn.headers['set-cookie']].flat().join('\n')).toMatch(/^inbox_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/m);
    expect(b.jar.get('inbox_attempt')).toBeUndefined();
    expect((await planted.get('/inbox')).headers.location).toBe('/inbox/sign-in');
    expect((await b.get('/inbox')).headers.location).toBe('/inbox/leads');
    const sessions: unknown[] = await t.dataSource.query(sql('SELECT id_hash FROM inbox_sessions WHERE person_id = ?'), [ana.id]);
    expect(sessions).toHaveLength(1);
    // A code works once.
    await b.visit('/inbox/sign-in');
    const again = await b.post('/inbox/sign-in/code', { code });
    expect(again.text).toContain('Este código não vale mais.');
    expect(logged.join('')).toContain(`"audit":"inbox_sign_in","user_id":"${ana.id}"`);
  });

  it('mails in English from an English page, and keeps neither address nor code in the clear, nor sealed once sent', async () => {
    const email = address('bob');
    await person('viewer', email);
    const b = await browser({ language: 'en-GB,en;q=0.8' });
    await b.post('/inbox/sign-in', { email });
    const code = await codeFor(email);
    expect((await mailTo(email)).parsed.subject).toBe(`Your sign-in code: ${code}`);
    const stored = JSON.stringify([
      await t.dataSource.query('SELECT * FROM verification_codes'),
      await t.dataSource.query('SELECT payload FROM webhook_messages'),
    ]);
    expect(stored).not.toContain(email);
    expect(stored).not.toContain(code);
    await eventually(async () =>
      (await t.dataSource.query('SELECT id FROM verification_codes WHERE mail_sealed IS NOT NULL')).length === 0 ? true : undefined,
    );
  });

  it('answers an address that is nobody’s with the same page and cookie, and sends it nothing', async () => {
    const known = address('known');
    await person('viewer', known);
    const unknown = address('nobody');
    const [a, b] = [await browser(), await browser()];
    const forKnown = await a.post('/inbox/sign-in', { email: known });
    const forUnknown = await b.post('/inbox/sign-in', { email: unknown });
    const shape = (html: string, email: string) => html.replaceAll(email, 'EMAIL').replace(/(content|value)="[\w-]{43}"/g, '$1="TOKEN"');
    expect(forUnknown.status).toBe(forKnown.status);
    expect(shape(forUnknown.text, unknown)).toBe(shape(forKnown.text, known));
    expect(b.jar.get('inbox_attempt')).toMatch(/^[\w-]{43}$/);
    await mailTo(known);
    // Its message went through the outbox like any other (the sealed mail emptied), and nothing was sent.
    await eventually(async () =>
      (await t.dataSource.query('SELECT id FROM verification_codes WHERE mail_sealed IS NOT NULL')).length === 0 ? true : undefined,
    );
    expect(sink.to(unknown)).toEqual([]);
    // No code is right for it: five tries end it as they end a known address's attempt.
    for (let i = 0; i < 4; i++) expect((await b.post('/inbox/sign-in/code', { code: String(100000 + i) })).text).toContain(`Restam ${4 - i} tentativas.`);
    expect((await b.post('/inbox/sign-in/code', { code: '123456' })).text).toContain('Este código não vale mais.');
    expect(b.jar.get('inbox_session')).toBeUndefined();
  });

  it('ends the attempt at the fifth wrong code: then even the right code signs nobody in', async () => {
    const email = address('guess');
    await person('admin', email);
    const b = await browser();
    await b.post('/inbox/sign-in', { email });
    const code = await codeFor(email);
    const wrong = code === '000000' ? '000001' : '000000';
    for (let left = 4; left >= 1; left--) {
      const res = await b.post('/inbox/sign-in/code', { code: wrong });
      expect(res.status).toBe(200);
      expect(res.text).toContain(`Código incorreto. Restam ${left} tentativas.`);
    }
    const attempt = b.jar.get('inbox_attempt')!;
    const ended = await b.post('/inbox/sign-in/code', { code: wrong });
    expect(ended.text).toContain('Este código não vale mais.');
    expect(ended.text).toContain('action="/inbox/sign-in"');
    expect(b.jar.get('inbox_attempt')).toBeUndefined();
    const [row] = await t.dataSource.query(sql('SELECT attempts FROM verification_codes ORDER BY created_at DESC LIMIT 1'));
    expect(Number(row.attempts)).toBe(5);
    // The attempt's cookie kept and sent again with the right code: still nothing.
    b.jar.set('inbox_attempt', attempt);
    const replayed = await b.post('/inbox/sign-in/code', { code });
    expect(replayed.status).toBe(200);
    expect(replayed.text).toContain('Este código não vale mais.');
    expect(b.jar.get('inbox_session')).toBeUndefined();
  });

  it('refuses an expired code', async () => {
    const email = address('late');
    await person('viewer', email);
    const b = await browser();
    await b.post('/inbox/sign-in', { email });
    const code = await codeFor(email);
    await t.dataSource.query(sql('UPDATE verification_codes SET expires_at = ? WHERE used_at IS NULL'), [Date.now() - 1]);
    const res = await b.post('/inbox/sign-in/code', { code });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Este código não vale mais.');
    expect(b.jar.get('inbox_session')).toBeUndefined();
  });

  it('gives an address 3 fresh codes an hour, known or not, then 429', async () => {
    for (const email of [address('busy'), address('busy-nobody')]) {
      if (email.startsWith('busy.')) await person('viewer', email);
      for (let i = 0; i < 3; i++) expect((await (await browser()).post('/inbox/sign-in', { email })).status).toBe(200);
      const refused = await (await browser()).post('/inbox/sign-in', { email: email.toUpperCase() });
      expect(refused.status).toBe(429);
      expect(refused.text).toContain('Muitos pedidos em pouco tempo.');
    }
  });

  it('gives one client address 30 fresh codes an hour, whatever the addresses', async () => {
    const b = await browser();
    for (let i = 0; i < 30; i++) expect((await b.post('/inbox/sign-in', { email: address('many') })).status).toBe(200);
    expect((await b.post('/inbox/sign-in', { email: address('many') })).status).toBe(429);
  });

  it('sends a browser with an unsafe return path to the leads page instead', async () => {
    const email = address('redirect');
    await person('viewer', email);
    const b = await browser({ returnPath: '//evil.example/inbox' });
    expect(b.page.text).toContain('<input type="hidden" name="return" value="/inbox/leads">');
    await b.post('/inbox/sign-in', { email, return: '/\\evil.example' });
    const res = await b.post('/inbox/sign-in/code', { code: await codeFor(email), return: 'https://evil.example/inbox/leads' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/inbox/leads');
  });

  it('refuses a cross-site post of the code form', async () => {
    const b = await browser();
    const res = expectContract(
      await t.http
        .post('/inbox/sign-in')
        .set(b.headers)
        .set('Cookie', b.jar.header)
        .type('form')
        .send(formBody({ email: address('x') })),
    );
    expect(res.status).toBe(403);
    const other = expectContract(
      await t.http
        .post('/inbox/sign-in/code')
        .set({ ...b.headers, Origin: 'https://evil.example' })
        .set('Cookie', b.jar.header)
        .type('form')
        .send(formBody({ _csrf: csrfOf(b.page.text), code: '123456' })),
    );
    expect(other.status).toBe(403);
  });

  describe('sessions', () => {
    it('end after the idle timeout, and after the absolute lifetime however used', async () => {
      for (const column of ['last_seen_at', 'expires_at']) {
        const ana = await signedInAs(t, 'viewer');
        expect((await ana.get('/inbox')).headers.location).toBe('/inbox/leads');
        const past = column === 'last_seen_at' ? Date.now() - t.config.inbox.idleTimeoutMs - 1 : Date.now() - 1;
        await t.dataSource.query(sql(`UPDATE inbox_sessions SET ${column} = ? WHERE person_id = ?`), [past, ana.userId]);
        const res = await ana.get('/inbox/sign-in');
        expect([res.headers['set-cookie']].flat().join('\n')).toMatch(/^inbox_session=; .*Max-Age=0$/m);
        expect(res.text).not.toContain('action="/inbox/sign-out"');
        expect(await t.dataSource.query(sql('SELECT id_hash FROM inbox_sessions WHERE person_id = ?'), [ana.userId])).toEqual([]);
      }
    });

    it('keep a used session alive within the idle timeout', async () => {
      const ana = await signedInAs(t, 'viewer');
      const recent = Date.now() - 2 * 60_000;
      await t.dataSource.query(sql('UPDATE inbox_sessions SET last_seen_at = ? WHERE person_id = ?'), [recent, ana.userId]);
      expect((await ana.get('/inbox')).headers.location).toBe('/inbox/leads');
      const [row] = await t.dataSource.query(sql('SELECT last_seen_at FROM inbox_sessions WHERE person_id = ?'), [ana.userId]);
      expect(Number(row.last_seen_at)).toBeGreaterThan(recent);
    });

    it('of a removed person end at once, every one of them', async () => {
      const ana = await signedInAs(t, 'admin');
      const second = await (await import('./support/inbox-session.js')).sessionFor(t, ana.userId, ana.email, 'admin');
      await signedInAs(t, 'admin'); // not the last admin, whom the store keeps
      expect(await t.app.get(PeopleService).remove(ana.userId)).toBe('done');
      for (const browserOf of [ana, second]) expect((await browserOf.get('/inbox')).headers.location).toBe('/inbox/sign-in');
      expect(await t.dataSource.query(sql('SELECT id_hash FROM inbox_sessions WHERE person_id = ?'), [ana.userId])).toEqual([]);
    });

    it('spend the operator rate-limit tier, by person', async () => {
      const ana = await signedInAs(t, 'viewer');
      expect((await ana.get('/inbox/sign-in')).headers['ratelimit-policy']).toMatch(/^"operator";/);
      expect((await t.http.get('/inbox/sign-in')).headers['ratelimit-policy']).toMatch(/^"anonymous";/);
    });
  });

  it('wrote no address, code or session id to any log line', () => {
    const text = logged.join('');
    expect(text.length).toBeGreaterThan(0);
    expect([...secrets].filter((secret) => text.includes(secret))).toEqual([]);
  });
});

describe('the daily cap of verification mail', () => {
  it('refuses codes past VERIFICATION_MAIL_DAILY_LIMIT, for every address, and sends no more mail', async () => {
    const sink = await SmtpSink.start();
    const t = await startTestApp({ SMTP_URL: sink.url, WEBHOOK_POLL_INTERVAL: '20ms', TRUST_PROXY: '1', VERIFICATION_MAIL_DAILY_LIMIT: '2' });
    try {
      const people = t.app.get(PeopleService);
      const ask = async (email: string, client: string) => {
        const page = await t.http.get('/inbox/sign-in').set('X-Forwarded-For', client);
        const cookie = [page.headers['set-cookie']].flat()[0].split(';')[0];
        return expectContract(
          await t.http
            .post('/inbox/sign-in')
            .set('X-Forwarded-For', client)
            .set('Cookie', cookie)
            .type('form')
            .send(formBody({ _csrf: csrfOf(page.text), email })),
        );
      };
      const emails = [address('cap-a'), address('cap-b'), address('cap-c')];
      for (const email of emails) await people.add(email, 'viewer');
      expect((await ask(emails[0], '203.0.113.1')).status).toBe(200);
      expect((await ask(emails[1], '203.0.113.2')).status).toBe(200);
      const refused = await ask(emails[2], '203.0.113.3');
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('600');
      expect((await ask(address('cap-nobody'), '203.0.113.4')).status).toBe(429);
      await eventually(() => (sink.messages.length >= 2 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(sink.messages.flatMap((mail) => mail.to).sort()).toEqual(
        emails
          .slice(0, 2)
          .map((email) => email.toLowerCase())
          .sort(),
      );
    } finally {
      await t.close();
      await sink.close();
    }
  });
});
