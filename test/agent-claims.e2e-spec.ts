/** @database the claim ceremony (issue 36): start, page, polls, the claimed identity, its tier, the variants, two instances */
import { decodeJwt } from 'jose';
import { expectContract } from './support/contract.js';
import { eventually } from './support/eventually.js';
import { codeOf } from './support/inbox-session.js';
import { expectProblem } from './support/problem.js';
import { SmtpSink } from './support/smtp-sink.js';
import { freshDatabase, ON_POSTGRES, startTestApp, TestApp, TestDatabase } from './support/test-app.js';

const CLAIM_GRANT = 'urn:workos:agent-auth:grant-type:claim';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;
const sql = (text: string) => (ON_POSTGRES ? text : text.replace(/\$\d+/g, '?'));
let counter = 0;
const owner = (name: string) => `${name}.${process.pid}.${++counter}@dono.example.com.br`;

describe('the claim ceremony', () => {
  let db: TestDatabase;
  let t: TestApp;
  let other: TestApp;
  let sink: SmtpSink;

  beforeAll(async () => {
    sink = await SmtpSink.start();
    db = await freshDatabase();
    const env = { SMTP_URL: sink.url, WEBHOOK_POLL_INTERVAL: '20ms', VERIFICATION_MAIL_DAILY_LIMIT: '1000' };
    t = await startTestApp(env, db);
    // A second instance on the same database: a claim started on one is confirmed and redeemed on either.
    other = await startTestApp(env, db);
  });
  afterAll(async () => {
    await other.close();
    await t.close();
    await db.drop();
    await sink.close();
  });

  const register = async (body: object = { type: 'anonymous' }, app = t) => {
    const res = expectContract(await app.http.post('/api/v1/agent/identity').send(body));
    expect(res.status).toBe(200);
    return res.body as Record<string, string> & { claim_attempt?: Record<string, string | number> };
  };
  const start = async (body: object, app = t) => expectContract(await app.http.post('/api/v1/agent/identity/claim').send(body));
  const poll = async (claimToken: string, app = t) =>
    expectContract(
      await app.http.post('/oauth2/token').set('Accept', 'application/json').type('form').send({ grant_type: CLAIM_GRANT, claim_token: claimToken }),
    );
  /** As if the interval had passed since the last poll. */
  const waitInterval = (attemptPath: string) =>
    t.dataSource.query(sql('UPDATE agent_claims SET last_polled_at = 0 WHERE id = $1'), [attemptPath.split('/').pop()]);
  const exchange = async (assertion: string) => expectContract(await t.http.post('/oauth2/token').type('form').send({ grant_type: JWT_BEARER, assertion }));
  const submit = async (token: string) =>
    expectContract(await t.http.post('/api/v1/lead').set('Authorization', `Bearer ${token}`).send({ nome: 'Ana Dona', email: 'ana@exemplo.com' }));
  const mailTo = (email: string, n = 1) => eventually(() => sink.to(email)[n - 1]);
  /** Posts the page's form, as a browser on the page would (its Origin is the service's). */
  const confirm = async (uri: string, fields: Record<string, string>, app = t) =>
    expectContract(await app.http.post(new URL(uri).pathname).set('Origin', 'http://leads.test').type('form').send(fields));

  it('from registration to the verified assertion: pending, slow_down, the page, the old token refused, the new tier', async () => {
    const registration = await register({ type: 'anonymous', client_name: 'Assistente da Maria' });
    expect(registration).toMatchObject({
      claim_url: 'http://leads.test/api/v1/agent/identity/claim',
      pre_claim_scopes: ['leads:write'],
      post_claim_scopes: ['leads:write'],
    });
    const before = (await exchange(registration.identity_assertion)).body.access_token as string;
    expect((await submit(before)).headers['ratelimit-policy']).toMatch(/^"agent";/);

    const email = owner('maria');
    const started = await start({ type: 'login_hint', claim_token: registration.claim_token, login_hint: email });
    expect(started.status).toBe(200);
    expect(started.headers['cache-control']).toBe('no-store');
    expect(started.body.status).toBe('initiated');
    const attempt = started.body.claim_attempt;
    expect(attempt).toEqual({
      user_code: expect.stringMatching(USER_CODE),
      verification_uri: expect.stringMatching(/^http:\/\/leads\.test\/claim\/[0-9a-f-]{36}$/),
      expires_in: 600,
      interval: 5,
    });

    const mail = await mailTo(email);
    const code = codeOf(mail.parsed.text!);
    expect(mail.parsed.subject).toBe(`Seu código para confirmar um agente: ${code}`);
    // The e-mail shows its own code only: the user code is on the agent's side.
    for (const part of [mail.parsed.text!, String(mail.parsed.html)]) expect(part).not.toContain(attempt.user_code.slice(0, 4));

    const pending = await poll(registration.claim_token);
    expect([pending.status, pending.body.error]).toEqual([400, 'authorization_pending']);
    expect(pending.headers['content-type']).toMatch(/^application\/json/);
    expect((await poll(registration.claim_token)).body.error).toBe('slow_down');

    // The page: what confirming does, when the agent registered, never the name it gave itself.
    const page = expectContract(await t.http.get(new URL(attempt.verification_uri).pathname));
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).toContain('agir em seu nome');
    expect(page.text).toContain('Se não foi você');
    expect(page.text).not.toContain('Assistente da Maria');
    expect(page.text).toMatch(/<form method="post" action="\/claim\/[0-9a-f-]{36}"/);
    const english = expectContract(await t.http.get(`${new URL(attempt.verification_uri).pathname}?lang=en`));
    expect(english.text).toContain('act for you');

    const wrong = await confirm(attempt.verification_uri, { user_code: attempt.user_code, email_code: code === '000000' ? '111111' : '000000' });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('Restam 4 tentativas');
    // On the other instance, the user code as a person might type it.
    const done = await confirm(attempt.verification_uri, { user_code: ` ${attempt.user_code.toLowerCase().replace('-', '')} `, email_code: code }, other);
    expect(done.status).toBe(200);

    await waitInterval(attempt.verification_uri);
    const claimed = await poll(registration.claim_token, other);
    expect(claimed.status).toBe(200);
    expect(claimed.headers['cache-control']).toBe('no-store');
    expect(claimed.body).toMatchObject({ token_type: 'Bearer', scope: 'leads:write' });
    expect(decodeJwt(claimed.body.identity_assertion)).toMatchObject({ sub: registration.registration_id, email, email_verified: true });

    // The tokens from before the claim stop at once; the claimed one is the verified tier.
    const refused = await submit(before);
    expectProblem(refused, 401, 'invalid_token');
    const after = await submit(claimed.body.access_token);
    expect(after.status).toBe(201);
    expect(after.headers['ratelimit-policy']).toBe('"verified_agent";q=10000000;w=60');
    // The assertion from before the claim gives no token; the refresh family goes on with the claimed identity.
    expect((await exchange(registration.identity_assertion)).body.code).toBe('invalid_grant');
    const refreshed = expectContract(await t.http.post('/api/v1/agent/identity').send({ type: 'refresh', refresh_token: registration.refresh_token }));
    expect(decodeJwt(refreshed.body.identity_assertion)).toMatchObject({ email, email_verified: true });
    expect((await exchange(refreshed.body.identity_assertion)).status).toBe(200);

    // Once: the claim is spent, and the registration cannot be claimed again.
    await waitInterval(attempt.verification_uri);
    expect((await poll(registration.claim_token)).body.error).toBe('invalid_grant');
    expectProblem(await start({ type: 'login_hint', claim_token: registration.claim_token, login_hint: owner('outro') }), 409, 'registration_claimed');
    // An erasure of the owner's address finds the registration through its verified address.
    const [row] = (await t.dataSource.query(sql('SELECT email_folded FROM agent_registration_addresses WHERE registration_id = $1'), [
      registration.registration_id,
    ])) as { email_folded: string }[];
    expect(row.email_folded).toBe(email);
  });

  it('an expired attempt answers expired_token and can be started again', async () => {
    const registration = await register();
    const email = owner('expira');
    const first = (await start({ type: 'login_hint', claim_token: registration.claim_token, login_hint: email })).body.claim_attempt;
    await t.dataSource.query(sql('UPDATE agent_claims SET expires_at = $1 WHERE id = $2'), [Date.now() - 1000, first.verification_uri.split('/').pop()]);
    expect((await poll(registration.claim_token)).body.error).toBe('expired_token');
    expect((await t.http.get(new URL(first.verification_uri).pathname)).status).toBe(410);
    const again = await start({ type: 'login_hint', claim_token: registration.claim_token, login_hint: email });
    expect(again.status).toBe(200);
    expect(again.body.claim_attempt.verification_uri).not.toBe(first.verification_uri);
    expect((await poll(registration.claim_token)).body.error).toBe('authorization_pending');
  });

  it('the fifth wrong code ends the attempt: a right pair after it is refused, and the agent is told access_denied', async () => {
    const registration = await register();
    const email = owner('cinco');
    const attempt = (await start({ type: 'login_hint', claim_token: registration.claim_token, login_hint: email })).body.claim_attempt;
    const code = codeOf((await mailTo(email)).parsed.text!);
    // A wrong user code spends a try like a wrong e-mailed code.
    const wrongPairs = [
      { user_code: 'BBBB-BBBB', email_code: code },
      { user_code: attempt.user_code, email_code: code === '000000' ? '111111' : '000000' },
    ];
    for (let i = 0; i < 4; i++) expect((await confirm(attempt.verification_uri, wrongPairs[i % 2])).status).toBe(400);
    expect((await confirm(attempt.verification_uri, wrongPairs[0])).status).toBe(410);
    expect((await confirm(attempt.verification_uri, { user_code: attempt.user_code, email_code: code })).status).toBe(410);
    expect((await poll(registration.claim_token)).body.error).toBe('access_denied');
  });

  it('service_auth registers and starts the claim in one step; identity_assertion is claimed for its asserted address', async () => {
    const email = owner('servico');
    const registration = await register({ type: 'service_auth', login_hint: email });
    expect(registration.registration_type).toBe('service_auth');
    const attempt = registration.claim_attempt!;
    expect(attempt.user_code).toMatch(USER_CODE);
    const code = codeOf((await mailTo(email)).parsed.text!);
    expect((await confirm(String(attempt.verification_uri), { user_code: String(attempt.user_code), email_code: code })).status).toBe(200);
    const claimed = await poll(registration.claim_token);
    expect(decodeJwt(claimed.body.identity_assertion)).toMatchObject({ email, email_verified: true, registration_type: 'service_auth' });

    const asserted = owner('afirmado');
    const assertion = await register({ type: 'identity_assertion', assertion_type: 'verified_email', assertion: asserted });
    expect(decodeJwt(assertion.identity_assertion)).toMatchObject({ email: asserted, email_verified: false });
    const mismatch = await start({ type: 'login_hint', claim_token: assertion.claim_token, login_hint: owner('outra') });
    expectProblem(mismatch, 422, 'validation_failed');
    expect(mismatch.body.errors[0]).toMatchObject({ pointer: '/login_hint' });
    const own = await start({ type: 'login_hint', claim_token: assertion.claim_token });
    expect(own.status).toBe(200);
    const ownCode = codeOf((await mailTo(asserted)).parsed.text!);
    expect((await confirm(own.body.claim_attempt.verification_uri, { user_code: own.body.claim_attempt.user_code, email_code: ownCode })).status).toBe(200);
    expect(decodeJwt((await poll(assertion.claim_token)).body.identity_assertion)).toMatchObject({ email: asserted, email_verified: true });
  });

  it('refuses what it cannot act on, and discovery names the claim', async () => {
    expectProblem(await start({ type: 'login_hint', claim_token: 'clm_nope', login_hint: owner('x') }), 400, 'invalid_claim_token');
    expectProblem(await start({ type: 'device_code', claim_token: 'clm_nope' }), 400, 'unsupported_identity_type');
    const missing = await start({ type: 'login_hint' });
    expectProblem(missing, 422, 'validation_failed');
    const anonymous = await register();
    expectProblem(await start({ type: 'login_hint', claim_token: anonymous.claim_token }), 422, 'validation_failed');
    expect((await poll('clm_nope')).body.error).toBe('invalid_grant');
    // Never started: nothing to poll.
    expect((await poll(anonymous.claim_token)).body.error).toBe('invalid_grant');
    expect((await t.http.get('/claim/019ac600-0000-7000-8000-000000000001')).status).toBe(404);
    const metadata = expectContract(await t.http.get('/.well-known/oauth-authorization-server'));
    expect(metadata.body.grant_types_supported).toContain(CLAIM_GRANT);
    expect(metadata.body.agent_auth).toMatchObject({
      identity_types_supported: expect.arrayContaining(['service_auth']),
      claim_types_supported: ['login_hint'],
    });
  });
});
