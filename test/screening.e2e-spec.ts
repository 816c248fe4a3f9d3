/** @database screening at intake: every reason from REST and MCP, one answer for every verdict, stored verdicts, webhooks */
import { randomInt } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { Response } from 'supertest';
import { FormTokens } from '../src/forms/form-tokens.service.js';
import { Lead } from '../src/leads/lead.entity.js';
import { LeadWriter } from '../src/leads/lead-writer.service.js';
import { VERIFY_TIMEOUT_MS } from '../src/screening/captcha-verifier.js';
import { BURST_LIMIT } from '../src/screening/screening.service.js';
import { CaptchaStub, TURNSTILE_TEST } from './support/captcha-stub.js';
import { contractSchema, expectContract } from './support/contract.js';
import { operatorToken } from './support/operator-token.js';
import { describeIf } from './support/skips.js';
import { freshDatabase, startTestApp, TestApp, TestDatabase } from './support/test-app.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Screening (docs/decisions/0033-screening.md) as a site and a bot meet it: every reason from POST /api/v1/lead and
 * from the MCP tool submit_lead, the same 201 receipt whatever the verdict, the verdict stored with the lead, webhooks
 * only for what people should see, a captcha provider outage held quickly, and channel labels from real clients.
 * Captchas go to a local siteverify speaking Turnstile's test secrets (test/support/captcha-stub.ts). The form tokens
 * are another part of issue 33: here FormTokens.redeem answers from a table (`fresh` too fast, `good` valid, else
 * invalid), so this suite tests what screening does with each answer.
 */

const ACCEPT_BOTH = 'application/json, text/event-stream';
const FAST_WEBHOOKS = { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms', WEBHOOK_POLL_INTERVAL: '20ms', WEBHOOK_TIMEOUT: '2s' };

/** A real lead: accents, a company site in the message, a telephone with its country code. */
const REAL = {
  nome: 'Maria da Conceição D’Ávila',
  email: 'maria.davila@souzaefilhos.com.br',
  telefone: '+55 (11) 98765-4321',
  empresa: 'Souza & Filhos Comércio Ltda.',
  mensagem: 'Olá! Vi https://www.souzaefilhos.com.br/beneficios e queria uma proposta para 40 pessoas. Obrigada =)',
  origem: 'site-contato',
};

type Body = Record<string, unknown>;
type Headers = Record<string, string>;

let addressCounter = 0;
/** A client address of its own for each lead that needs one, so that burst counts never mix across tests. */
const freshAddress = () => `10.33.${Math.floor(++addressCounter / 250)}.${(addressCounter % 250) + 1}`;

/** Each reason and what brings it on POST /api/v1/lead (with a valid captcha token unless the case says otherwise). */
const REST_CASES: [string, 'held' | 'spam', Body, Headers][] = [
  ['captcha_missing', 'held', REAL, { 'Captcha-Token': '' }],
  ['captcha_failed', 'spam', REAL, { 'Captcha-Token': 'forged.token' }],
  ['disposable_email', 'held', { ...REAL, email: 'test7@mailinator.com' }, {}],
  ['honeypot', 'spam', REAL, { 'Form-Token': 'good', 'Form-Trap': 'https://cheap.example' }],
  ['too_fast', 'held', REAL, { 'Form-Token': 'fresh' }],
  ['form_token_invalid', 'held', REAL, { 'Form-Token': 'forged', 'Form-Trap': '' }],
  ['form_token_invalid', 'held', REAL, { 'Form-Trap': '' }],
  ['too_many_links', 'held', { ...REAL, mensagem: 'BUY CHEAP VIAGRA http://a.example http://b.example http://c.example' }, {}],
  ['markup', 'held', { ...REAL, nome: '<script>alert(1)</script>' }, {}],
  ['spreadsheet_formula', 'held', { ...REAL, mensagem: '=HYPERLINK("https://x.example","Clique aqui")' }, {}],
];

describe('screening at intake', () => {
  let t: TestApp;
  let stub: CaptchaStub;
  let redeem: jest.SpyInstance;

  /** A JSON-RPC answer of /mcp, whether it came as JSON or as an SSE stream. */
  function rpcMessage(res: Response): Record<string, any> {
    if (String(res.headers['content-type']).startsWith('text/event-stream')) {
      const data = res.text.split('\n').find((line) => line.startsWith('data:'));
      return JSON.parse(data!.slice(5));
    }
    return res.body;
  }

  const post = (body: Body, headers: Headers = {}) => {
    const withToken = 'Captcha-Token' in headers ? headers : { 'Captcha-Token': TURNSTILE_TEST.dummyToken, ...headers };
    // An empty Captcha-Token here means none at all; an empty Form-Trap is sent as the form script sends it.
    const sent = Object.fromEntries(Object.entries(withToken).filter(([name, value]) => name !== 'Captcha-Token' || value !== ''));
    return t.http
      .post('/api/v1/lead')
      .set({ 'X-Forwarded-For': freshAddress(), ...sent })
      .send(body)
      .then(expectContract);
  };

  const submitOverMcp = async (body: Body, headers: Headers = {}) => {
    const res = await t.http
      .post('/mcp')
      .set({ Accept: ACCEPT_BOTH, 'Content-Type': 'application/json', 'X-Forwarded-For': freshAddress(), ...headers })
      .send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'submit_lead', arguments: body } }))
      .then(expectContract);
    expect(res.status).toBe(200);
    const result = rpcMessage(res).result as { isError: boolean; structuredContent: { id: string; status: string; received_at: string } };
    expect(result.isError).toBe(false);
    return result.structuredContent;
  };

  const stored = (id: string) => t.dataSource.getRepository(Lead).findOneByOrFail({ id });

  /** The stored verdict, and that it was screening's, decided and (when accepted only) announced as the lead arrived. */
  async function expectVerdict(id: string, verdict: string, reasons: string[]): Promise<void> {
    const lead = await stored(id);
    expect({ verdict: lead.screeningVerdict, reasons: lead.screeningReasons, decidedBy: lead.screeningDecidedBy }).toEqual({
      verdict,
      reasons,
      decidedBy: 'screening',
    });
    expect(lead.screeningDecidedAt.getTime()).toBe(lead.receivedAt.getTime());
    expect(lead.announcedAt?.getTime() ?? null).toBe(verdict === 'accepted' ? lead.receivedAt.getTime() : null);
  }

  function expectReceipt(res: Response): { id: string } {
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['id', 'received_at', 'status']);
    expect(res.body.status).toBe('received');
    return res.body as { id: string };
  }

  beforeAll(async () => {
    stub = await CaptchaStub.start();
    t = await startTestApp({
      TRUST_PROXY: '1',
      CAPTCHA_PROVIDER: 'turnstile',
      CAPTCHA_SECRET: TURNSTILE_TEST.secretPasses,
      CAPTCHA_SITE_KEY: TURNSTILE_TEST.siteKeyPasses,
      CAPTCHA_VERIFY_URL: stub.turnstileVerifyUrl,
      ...FAST_WEBHOOKS,
    });
    redeem = jest
      .spyOn(t.app.get(FormTokens), 'redeem')
      .mockImplementation((token: string) => Promise.resolve(token === 'good' ? 'valid' : token === 'fresh' ? 'too_fast' : 'invalid'));
  });
  afterEach(() => {
    stub.mode = 'normal';
  });
  afterAll(async () => {
    await t.close();
    await stub.close();
  });

  it('accepts a real lead with a good captcha token, asking the provider once with the client’s address', async () => {
    const before = stub.requests.length;
    const res = await t.http
      .post('/api/v1/lead')
      .set({ 'X-Forwarded-For': '203.0.113.77', 'Captcha-Token': TURNSTILE_TEST.dummyToken })
      .send(REAL)
      .then(expectContract);
    const { id } = expectReceipt(res);
    await expectVerdict(id, 'accepted', []);
    expect(stub.requests.slice(before)).toEqual([
      expect.objectContaining({
        form: expect.objectContaining({ response: TURNSTILE_TEST.dummyToken, remoteip: '203.0.113.77', secret: TURNSTILE_TEST.secretPasses }),
      }),
    ]);
  });

  it.each(REST_CASES)('REST: %s → %s, with the same 201 receipt', async (reason, verdict, body, headers) => {
    const { id } = expectReceipt(await post(body, headers));
    await expectVerdict(id, verdict, [reason]);
  });

  it('REST: a form lead with a valid token and an empty trap field is accepted; the token is redeemed once', async () => {
    redeem.mockClear();
    const { id } = expectReceipt(await post(REAL, { 'Form-Token': 'good', 'Form-Trap': '' }));
    await expectVerdict(id, 'accepted', []);
    expect(redeem.mock.calls).toEqual([['good']]);
    // Without a Form-Token the lead is no form lead: nothing is redeemed.
    await post(REAL);
    expect(redeem).toHaveBeenCalledTimes(1);
  });

  it(`REST and MCP: the ${BURST_LIMIT + 1}th identical nome, email and mensagem from one address in 10 minutes is held (duplicate_burst)`, async () => {
    const address = freshAddress();
    const ids: string[] = [];
    for (let i = 0; i <= BURST_LIMIT; i++) {
      const res = await t.http
        .post('/api/v1/lead')
        .set({ 'X-Forwarded-For': address, 'Captcha-Token': TURNSTILE_TEST.dummyToken })
        .send(REAL)
        .then(expectContract);
      ids.push(expectReceipt(res).id);
    }
    for (const id of ids.slice(0, BURST_LIMIT)) await expectVerdict(id, 'accepted', []);
    await expectVerdict(ids[BURST_LIMIT], 'held', ['duplicate_burst']);
    // The same body over MCP from that address counts in the same burst; another address does not.
    const { id: overMcp } = await submitOverMcp(REAL, { 'X-Forwarded-For': address, 'Captcha-Token': TURNSTILE_TEST.dummyToken });
    await expectVerdict(overMcp, 'held', ['duplicate_burst']);
    const { id: elsewhere } = expectReceipt(await post(REAL));
    await expectVerdict(elsewhere, 'accepted', []);
  });

  it.each(REST_CASES.filter(([reason]) => !['honeypot', 'too_fast', 'form_token_invalid'].includes(reason)))(
    'MCP submit_lead: %s → %s',
    async (reason, verdict, body, headers) => {
      const token = headers['Captcha-Token'] ?? TURNSTILE_TEST.dummyToken;
      const receipt = await submitOverMcp(body, token === '' ? {} : { 'Captcha-Token': token });
      expect(Object.keys(receipt).sort()).toEqual(['id', 'received_at', 'status']);
      await expectVerdict(receipt.id, verdict, [reason]);
    },
  );

  it('MCP submit_lead: a real lead with a good captcha token is accepted, labelled mcp', async () => {
    const { id } = await submitOverMcp(REAL, { 'Captcha-Token': TURNSTILE_TEST.dummyToken });
    await expectVerdict(id, 'accepted', []);
    expect((await stored(id)).channel).toBe('mcp');
  });

  it('tells MCP clients of the Captcha-Token header in the server card', async () => {
    const card = await t.http.get('/.well-known/mcp/server-card.json').then(expectContract);
    expect(card.body.remotes[0].headers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'Captcha-Token', isRequired: false, description: expect.stringContaining('Cloudflare Turnstile') }),
      ]),
    );
  });

  it('bearer callers need no captcha, and their leads still pass the content rules', async () => {
    const writer = await operatorToken(t, 'leads:write');
    const { id } = expectReceipt(await post(REAL, { 'Captcha-Token': '', Authorization: `Bearer ${writer}` }));
    await expectVerdict(id, 'accepted', []);
    const { id: junk } = expectReceipt(await post({ ...REAL, nome: '<b>Loja</b>' }, { 'Captcha-Token': '', Authorization: `Bearer ${writer}` }));
    await expectVerdict(junk, 'held', ['markup']);
  });

  it('gives the same answer for every verdict: status, headers but the date and request id, and the receipt’s shape', async () => {
    const answers = [await post(REAL), await post({ ...REAL, email: 'x@mailinator.com' }), await post(REAL, { 'Form-Token': 'good', 'Form-Trap': 'x' })];
    await expectVerdict(answers[0].body.id, 'accepted', []);
    await expectVerdict(answers[1].body.id, 'held', ['disposable_email']);
    await expectVerdict(answers[2].body.id, 'spam', ['honeypot']);
    const shape = (res: Response) => ({
      status: res.status,
      headers: Object.fromEntries(Object.entries(res.headers).filter(([name]) => !['date', 'x-request-id'].includes(name))),
      body: Object.fromEntries(Object.entries(res.body as Body).map(([key, value]) => [key, key === 'status' ? value : typeof value])),
      bodyLength: res.text.length,
    });
    expect(shape(answers[1])).toEqual(shape(answers[0]));
    expect(shape(answers[2])).toEqual(shape(answers[0]));
  });

  it('replays the first receipt to a retry with the same Idempotency-Key, without judging it again', async () => {
    const key = `screening-${Date.now()}`;
    const address = freshAddress();
    const first = await t.http
      .post('/api/v1/lead')
      .set({ 'X-Forwarded-For': address, 'Idempotency-Key': key, 'Captcha-Token': TURNSTILE_TEST.dummyToken, 'Form-Token': 'good', 'Form-Trap': 'bot' })
      .send(REAL)
      .then(expectContract);
    const asked = stub.requests.length;
    const retry = await t.http
      .post('/api/v1/lead')
      .set({ 'X-Forwarded-For': address, 'Idempotency-Key': key, 'Captcha-Token': TURNSTILE_TEST.dummyToken })
      .send(REAL)
      .then(expectContract);
    expect([retry.status, retry.body]).toEqual([201, first.body]);
    await expectVerdict(first.body.id, 'spam', ['honeypot']);
    expect(stub.requests.length).toBe(asked);
  });

  it('asks Turnstile again with the same idempotency_key when a keyed lead is retried after its write failed', async () => {
    const key = `screening-retry-${Date.now()}`;
    const address = freshAddress();
    const send = () =>
      t.http.post('/api/v1/lead').set({ 'X-Forwarded-For': address, 'Idempotency-Key': key, 'Captcha-Token': TURNSTILE_TEST.dummyToken }).send(REAL);
    const asked = stub.requests.length;
    const write = jest.spyOn(t.app.get(LeadWriter), 'write').mockRejectedValueOnce(new Error('the database went away'));
    try {
      expect((await send()).status).toBeGreaterThanOrEqual(500);
    } finally {
      write.mockRestore();
    }
    const { id } = expectReceipt(await send().then(expectContract));
    await expectVerdict(id, 'accepted', []);
    const [failed, retried] = stub.requests.slice(asked).map((request) => request.form.idempotency_key);
    expect(retried).toBe(failed);
  });

  describe('a captcha provider outage', () => {
    it.each(['fail', 'garbage'] as const)('holds the lead (captcha_unavailable) when the provider answers %s, from REST and MCP', async (mode) => {
      stub.mode = mode;
      const { id } = expectReceipt(await post(REAL));
      await expectVerdict(id, 'held', ['captcha_unavailable']);
      const receipt = await submitOverMcp(REAL, { 'Captcha-Token': TURNSTILE_TEST.dummyToken });
      await expectVerdict(receipt.id, 'held', ['captcha_unavailable']);
    });

    it('holds the lead quickly when the provider does not answer at all', async () => {
      stub.mode = 'hang';
      const started = Date.now();
      const { id } = expectReceipt(await post(REAL));
      expect(Date.now() - started).toBeLessThan(VERIFY_TIMEOUT_MS + 3000);
      await expectVerdict(id, 'held', ['captcha_unavailable']);
    }, 15_000);
  });

  it('the sandbox accepts the screening headers, ignores them, and says nothing of screening', async () => {
    const plain = await t.http.post('/api/v1/sandbox').send(REAL).then(expectContract);
    const withHeaders = await t.http
      .post('/api/v1/sandbox')
      .set({ 'Captcha-Token': 'forged', 'Form-Token': 'forged', 'Form-Trap': 'filled' })
      .send(REAL)
      .then(expectContract);
    expect(plain.status).toBe(200);
    expect([withHeaders.status, withHeaders.body]).toEqual([plain.status, plain.body]);
    expect(withHeaders.text).not.toMatch(/screen|captcha|held|spam|trap/i);
  });

  describe('webhooks', () => {
    let everything: WebhookReceiver;
    let reviewers: WebhookReceiver;

    beforeAll(async () => {
      everything = await WebhookReceiver.start();
      reviewers = await WebhookReceiver.start();
    });
    afterAll(async () => {
      await everything.close();
      await reviewers.close();
    });

    it('announce an accepted lead with lead.received, a held one only to endpoints that ask for lead.held, and spam to nobody', async () => {
      const manager = await operatorToken(t, 'webhooks:manage');
      const create = (body: Body) => t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send(body).then(expectContract);
      const plain = await create({ url: everything.url });
      expect(plain.status).toBe(201);
      // An endpoint created without events gets every type but lead.held.
      expect(plain.body.events).toEqual(['lead.received', 'lead.erased', 'consent.revoked']);
      const review = await create({ url: reviewers.url, events: ['lead.held', 'lead.received'] });
      expect(review.status).toBe(201);

      const held = expectReceipt(await post({ ...REAL, email: 'held@mailinator.com' })).id;
      const spam = expectReceipt(await post(REAL, { 'Form-Token': 'good', 'Form-Trap': 'bot' })).id;
      const accepted = expectReceipt(await post(REAL)).id;

      const messages = (await t.dataSource.query('SELECT event_type, lead_id FROM webhook_messages')) as { event_type: string; lead_id: string }[];
      expect(messages.filter((m) => [held, spam, accepted].includes(m.lead_id)).sort((a, b) => a.event_type.localeCompare(b.event_type))).toEqual([
        { event_type: 'lead.held', lead_id: held },
        { event_type: 'lead.received', lead_id: accepted },
      ]);

      const toReviewers = await reviewers.waitFor(2);
      const toEveryone = await everything.waitFor(1);
      const delivered = (list: { body: string }[]) =>
        list.map((d) => JSON.parse(d.body) as { type: string; data: { id: string } }).map((e) => [e.type, e.data.id]);
      expect(delivered(toReviewers).sort()).toEqual([
        ['lead.held', held],
        ['lead.received', accepted],
      ]);
      expect(delivered(toEveryone)).toEqual([['lead.received', accepted]]);
      const heldEvent = JSON.parse(toReviewers.find((d) => d.body.includes('"lead.held"'))!.body);
      const validate = contractSchema('/components/schemas/LeadHeldEvent');
      expect(validate(heldEvent) ? [] : validate.errors).toEqual([]);
      // Nothing more comes: the spam lead has no message at all, and the held one none for the plain endpoint.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(everything.received).toHaveLength(1);
      expect(reviewers.received).toHaveLength(2);
    });
  });

  describe('channel labels from real clients', () => {
    let base: string;
    beforeAll(async () => {
      await t.app.listen(0, '127.0.0.1');
      base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    });

    it('labels a lead sent with Node’s fetch (Sec-Fetch-Mode: cors, no Origin) api', async () => {
      const res = await fetch(`${base}/api/v1/lead`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'captcha-token': TURNSTILE_TEST.dummyToken, 'x-forwarded-for': freshAddress() },
        body: JSON.stringify(REAL),
      });
      expect(res.status).toBe(201);
      const { id } = (await res.json()) as { id: string };
      expect((await stored(id)).channel).toBe('api');
    });

    it('labels a lead with the headers curl and Python’s requests send api', async () => {
      for (const agent of <Headers[]>[
        { 'User-Agent': 'curl/8.14.1', Accept: '*/*' },
        { 'User-Agent': 'python-requests/2.32.3', Accept: '*/*', Connection: 'keep-alive' },
      ]) {
        const res = await post(REAL, agent);
        expect((await stored(expectReceipt(res).id)).channel).toBe('api');
      }
    });

    it('labels a lead with the headers a browser page sends (Origin, Sec-Fetch-Site) form', async () => {
      const res = await post(REAL, {
        Origin: 'https://www.souzaefilhos.com.br',
        'Sec-Fetch-Site': 'cross-site',
        'Sec-Fetch-Mode': 'cors',
        'Sec-Fetch-Dest': 'empty',
      });
      expect((await stored(expectReceipt(res).id)).channel).toBe('form');
    });
  });
});

describe('screening with Turnstile’s already-spent test secret', () => {
  let t: TestApp;
  let stub: CaptchaStub;
  beforeAll(async () => {
    stub = await CaptchaStub.start();
    t = await startTestApp({
      CAPTCHA_PROVIDER: 'turnstile',
      CAPTCHA_SECRET: TURNSTILE_TEST.secretSpent,
      CAPTCHA_SITE_KEY: TURNSTILE_TEST.siteKeyPasses,
      CAPTCHA_VERIFY_URL: stub.turnstileVerifyUrl,
    });
  });
  afterAll(async () => {
    await t.close();
    await stub.close();
  });

  it('holds a lead whose token was already spent (captcha_expired), from REST and MCP', async () => {
    const rest = await t.http.post('/api/v1/lead').set('Captcha-Token', TURNSTILE_TEST.dummyToken).send(REAL).then(expectContract);
    expect(rest.status).toBe(201);
    const mcp = await t.http
      .post('/mcp')
      .set({ Accept: ACCEPT_BOTH, 'Content-Type': 'application/json', 'Captcha-Token': TURNSTILE_TEST.dummyToken })
      .send(
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'submit_lead', arguments: { ...REAL, mensagem: 'Outra mensagem' } } }),
      )
      .then(expectContract);
    expect(mcp.status).toBe(200);
    const leads = await t.dataSource.getRepository(Lead).find();
    expect(leads.map((lead) => [lead.channel, lead.screeningVerdict, lead.screeningReasons]).sort()).toEqual([
      ['api', 'held', ['captcha_expired']],
      ['mcp', 'held', ['captcha_expired']],
    ]);
  });
});

// Needs a Redis server (TEST_REDIS_URL; CI always names one).
describeIf(['redis'])('the burst count shared through Redis', () => {
  // A prefix of this run only, so that runs sharing the Redis never meet.
  const prefix = `e2e-screening-${process.pid}-${randomInt(1e9)}:`;
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    database = await freshDatabase();
    const env = { TRUST_PROXY: '1', REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_KEY_PREFIX: prefix };
    a = await startTestApp(env, database);
    b = await startTestApp(env, database);
    const deadline = Date.now() + 15_000;
    for (const t of [a, b]) {
      while ((await t.http.get('/api/v1/health')).body.checks?.redis !== 'up') {
        if (Date.now() > deadline) throw new Error('Redis not up');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await database.drop();
  });

  it(`holds the ${BURST_LIMIT + 1}th identical lead from one address whichever instance each went to, keyed by a hash`, async () => {
    const address = `10.34.${randomInt(256)}.${randomInt(1, 255)}`;
    const ids: string[] = [];
    for (let i = 0; i <= BURST_LIMIT; i++) {
      const res = await (i % 2 ? b : a).http.post('/api/v1/lead').set('X-Forwarded-For', address).send(REAL).then(expectContract);
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const verdicts = await a.dataSource.getRepository(Lead).findBy(ids.map((id) => ({ id })));
    const byId = new Map(verdicts.map((lead) => [lead.id, lead.screeningVerdict]));
    expect(ids.map((id) => byId.get(id))).toEqual([...Array<string>(BURST_LIMIT).fill('accepted'), 'held']);
    // The key names neither the address nor the e-mail.
    const redis = new Redis(process.env.TEST_REDIS_URL!);
    try {
      const keys = await redis.keys(`${prefix}*burst*`);
      expect(keys).toHaveLength(1);
      expect(keys[0]).not.toContain(address);
      expect(keys[0]).not.toContain(REAL.email);
    } finally {
      redis.disconnect();
    }
  });
});
