/** @database the webhook outbox: deliveries, leases, retries */
import { Webhook } from 'standardwebhooks';
import { WebhookResolver } from '../src/webhooks/webhook-tokens.js';
import { expectContract } from './support/contract.js';
import { expectProblem } from './support/problem.js';
import { operatorToken } from './support/operator-token.js';
import { ON_POSTGRES, startTestApp, TestApp } from './support/test-app.js';
import { ReceivedWebhook, WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Lead delivery by webhook (docs/decisions/0027-webhooks-outbox.md): the endpoints API, Standard Webhooks signatures
 * checked by the reference library, retries with the same webhook-id, the attempt log, 410, disabling, skipping and
 * replay, secret rotation, test events, and the server-side request forgery rules at creation and at connection.
 * Every response is checked against the contract.
 */

/** Short retries, so that a series of attempts fits in a test. */
const FAST = { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms', WEBHOOK_POLL_INTERVAL: '20ms', WEBHOOK_TIMEOUT: '2s' };

function verify(secret: string, delivery: ReceivedWebhook): unknown {
  return new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
}

async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('webhooks', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let manager: string;
  let reader: string;

  const call = (method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object, token: string | null = manager) => {
    let req = t.http[method](path);
    if (token !== null) req = req.set('Authorization', `Bearer ${token}`);
    return (body === undefined ? req : req.send(body)).then(expectContract);
  };
  const create = async (body: object = { url: receiver.url }) => {
    const res = await call('post', '/api/v1/webhooks', body);
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string; url: string; events: string[]; status: string };
  };
  const lead = async (nome = 'Ana') => {
    const res = await t.http.post('/api/v1/lead').send({ nome, email: 'ana@example.com' }).then(expectContract);
    expect(res.status).toBe(201);
    return res.body as { id: string };
  };
  const attempts = async (id: string, query = '') => (await call('get', `/api/v1/webhooks/${id}/deliveries${query}`)).body.data as Record<string, unknown>[];
  /** Deletes every endpoint, so that each test sees only its own. */
  const clear = async () => {
    for (const endpoint of (await call('get', '/api/v1/webhooks')).body.data) await call('delete', `/api/v1/webhooks/${endpoint.id}`);
  };

  beforeAll(async () => {
    t = await startTestApp(FAST);
    manager = await operatorToken(t, 'webhooks:manage');
    reader = await operatorToken(t, 'leads:read');
  });
  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterEach(async () => {
    await clear();
    await receiver.close();
  });
  afterAll(() => t.close());

  describe('endpoints API', () => {
    it('creates an endpoint with a secret shown once, lists, reads, updates and deletes it', async () => {
      const created = await create({ url: receiver.url, description: '  CRM  ' });
      expect(created).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        url: receiver.url,
        events: ['lead.received', 'lead.erased', 'consent.revoked'],
        description: 'CRM',
        status: 'enabled',
        disabled_reason: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      });
      expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
      const { secret: _, ...endpoint } = created;

      const listed = await call('get', '/api/v1/webhooks');
      expect(listed.status).toBe(200);
      expect(listed.headers['cache-control']).toBe('no-store');
      expect(listed.body).toEqual({ data: [endpoint] });
      expect(JSON.stringify(listed.body)).not.toContain(created.secret.slice(6));
      expect((await call('get', `/api/v1/webhooks/${created.id}`)).body).toEqual(endpoint);

      const patched = await call('patch', `/api/v1/webhooks/${created.id}`, { description: null, events: ['lead.received'] });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ id: created.id, description: null });

      const removed = await call('delete', `/api/v1/webhooks/${created.id}`);
      expect(removed.status).toBe(204);
      expectProblem(await call('get', `/api/v1/webhooks/${created.id}`), 404, 'webhook_not_found');
      expectProblem(await call('delete', `/api/v1/webhooks/${created.id}`), 404, 'webhook_not_found');
      expectProblem(await call('get', '/api/v1/webhooks/not-a-uuid'), 404, 'webhook_not_found');
    });

    it('refuses bad bodies with a pointer per member, and stores nothing', async () => {
      const res = await call('post', '/api/v1/webhooks', { url: 42, events: ['lead.received', 'lead.received', 'nope'], description: 'a\u0007', extra: 1 });
      expectProblem(res, 422, 'validation_failed');
      expect(res.body.errors.map((e: { pointer: string; code: string }) => [e.pointer, e.code])).toEqual([
        ['/extra', 'unknown_field'],
        ['/url', 'invalid_type'],
        ['/events/1', 'duplicate'],
        ['/events/2', 'unknown_event'],
        ['/description', 'invalid_characters'],
      ]);
      expectProblem(await call('post', '/api/v1/webhooks', {}), 422, 'validation_failed');
      expectProblem(await call('post', '/api/v1/webhooks', { url: 'not a url' }), 422, 'validation_failed');
      expect((await call('post', '/api/v1/webhooks', { url: 'ftp://127.0.0.1/' })).body.errors[0]).toMatchObject({
        pointer: '/url',
        code: 'scheme_not_allowed',
      });
      expect((await call('post', '/api/v1/webhooks', { url: 'http://user:pw@127.0.0.1/' })).body.errors[0]).toMatchObject({
        pointer: '/url',
        code: 'credentials_not_allowed',
      });
      expect((await call('post', '/api/v1/webhooks', { url: receiver.url, events: [] })).body.errors[0]).toMatchObject({
        pointer: '/events',
        code: 'too_short',
      });
      expectProblem(await call('post', '/api/v1/webhooks', [1] as unknown as object), 400, 'body_not_object');
      const endpoint = await create();
      expect((await call('patch', `/api/v1/webhooks/${endpoint.id}`, {})).body.errors[0]).toMatchObject({ pointer: '', code: 'empty_patch' });
      expect((await call('patch', `/api/v1/webhooks/${endpoint.id}`, { status: 'paused' })).body.errors[0]).toMatchObject({
        pointer: '/status',
        code: 'invalid_value',
      });
      expect((await call('get', '/api/v1/webhooks')).body.data).toHaveLength(1);
    });

    it('needs a token with webhooks:manage', async () => {
      const anonymous = await call('get', '/api/v1/webhooks', undefined, null);
      expect(anonymous.status).toBe(401);
      const forbidden = await call('post', '/api/v1/webhooks', { url: receiver.url }, reader);
      expectProblem(forbidden, 403, 'insufficient_scope');
      expect(forbidden.headers['www-authenticate']).toContain('scope="webhooks:manage"');
    });

    it('refuses a bad deliveries query with 400 invalid_query', async () => {
      const endpoint = await create();
      expectProblem(await call('get', `/api/v1/webhooks/${endpoint.id}/deliveries?limit=0`), 400, 'invalid_query');
      expectProblem(await call('get', `/api/v1/webhooks/${endpoint.id}/deliveries?cursor=xyz`), 400, 'invalid_query');
      expectProblem(await call('get', `/api/v1/webhooks/${endpoint.id}/deliveries?message_id=1`), 400, 'invalid_query');
      expectProblem(await call('get', `/api/v1/webhooks/${endpoint.id}/deliveries?color=red`), 400, 'invalid_query');
    });
  });

  describe('delivery', () => {
    it('delivers each stored lead, signed, with the lead exactly as the read API shows it', async () => {
      const endpoint = await create();
      const stored = await lead('Bia');
      const [delivery] = await receiver.waitFor(1);
      expect(verify(endpoint.secret, delivery)).toBeTruthy();
      expect(delivery.headers).toMatchObject({
        'content-type': 'application/json',
        'user-agent': expect.stringMatching(/^leads-service\/\d+\.\d+\.\d+ \(webhooks\)$/),
        'webhook-id': expect.stringMatching(/^msg_[0-9a-f]{32}$/),
      });
      expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
      const read = await t.http.get(`/api/v1/leads/${stored.id}`).set('Authorization', `Bearer ${reader}`);
      const body = JSON.parse(delivery.body);
      expect(body).toEqual({ type: 'lead.received', timestamp: read.body.received_at, data: read.body });
      const [logged] = await eventually(async () => {
        const rows = await attempts(endpoint.id);
        return rows.length ? rows : undefined;
      });
      expect(logged).toEqual({
        message_id: delivery.headers['webhook-id'],
        event_type: 'lead.received',
        attempt: 1,
        attempted_at: expect.any(String),
        outcome: 'succeeded',
        status_code: 200,
        error: null,
        latency_ms: expect.any(Number),
        response_body: null,
        next_attempt_at: null,
      });
    });

    it('writes a lead message only while an endpoint could get it on SQLite, always on PostgreSQL', async () => {
      const messagesOf = async (id: string) => ((await t.dataSource.query(`SELECT id FROM webhook_messages WHERE lead_id = '${id}'`)) as unknown[]).length;
      // SQLite serves one instance, which knows that no endpoint exists; on PostgreSQL another instance may have made one.
      const withoutEndpoint = ON_POSTGRES ? 1 : 0;
      expect(await messagesOf((await lead('Antes')).id)).toBe(withoutEndpoint);

      const endpoint = await create();
      const stored = await lead('Durante');
      expect(await messagesOf(stored.id)).toBe(1);
      const [delivery] = await receiver.waitFor(1);
      expect(verify(endpoint.secret, delivery)).toMatchObject({ data: { id: stored.id } });

      await call('delete', `/api/v1/webhooks/${endpoint.id}`);
      expect(await messagesOf((await lead('Depois')).id)).toBe(withoutEndpoint);
      expect(receiver.received).toHaveLength(1);
    });

    it('retries a failing receiver with the same webhook-id, signing each attempt afresh, and logs every attempt', async () => {
      const endpoint = await create();
      receiver.planned.push({ status: 500, body: 'x'.repeat(10_000) }, { status: 302, headers: { location: receiver.url } });
      await lead();
      const received = await receiver.waitFor(3);
      expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(1);
      for (const delivery of received) expect(verify(endpoint.secret, delivery)).toBeTruthy();
      const log = await eventually(async () => {
        const rows = await attempts(endpoint.id);
        return rows.length === 3 ? rows : undefined;
      });
      expect(log.map((row) => [row.attempt, row.outcome, row.status_code])).toEqual([
        [3, 'succeeded', 200],
        [2, 'failed', 302],
        [1, 'failed', 500],
      ]);
      expect((log[2].response_body as string).length).toBe(4096);
      expect(log[2].next_attempt_at).not.toBeNull();
      // Pages of the log follow one another.
      const first = await call('get', `/api/v1/webhooks/${endpoint.id}/deliveries?limit=2`);
      const second = await call('get', `/api/v1/webhooks/${endpoint.id}/deliveries?limit=2&cursor=${first.body.next_cursor}`);
      expect([...first.body.data, ...second.body.data]).toEqual(log);
      expect(second.body.next_cursor).toBeNull();
      const filtered = await attempts(endpoint.id, `?message_id=${received[0].headers['webhook-id']}`);
      expect(filtered).toHaveLength(3);
    });

    it('keeps a receiver answer with NUL bytes, and honours Retry-After only on 429 and 503', async () => {
      const endpoint = await create();
      receiver.planned.push({ status: 500, headers: { 'retry-after': '3600' }, body: 'bad\u0000answer' });
      await lead();
      await receiver.waitFor(2);
      const log = await eventually(async () => {
        const rows = await attempts(endpoint.id);
        return rows.length === 2 ? rows : undefined;
      });
      expect(log[1]).toMatchObject({ attempt: 1, status_code: 500, response_body: 'bad\uFFFDanswer' });
      expect(Date.parse(log[1].next_attempt_at as string) - Date.parse(log[1].attempted_at as string)).toBeLessThan(1000);
    });

    it('refuses a URL whose normalised form is too long', async () => {
      const res = await call('post', '/api/v1/webhooks', { url: `${receiver.url}/${'é'.repeat(1000)}` });
      expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '/url', code: 'too_long' })]);
    });

    it('gives up after the last retry and leaves the delivery failed', async () => {
      const endpoint = await create();
      receiver.fallback = { status: 500 };
      await lead();
      await receiver.waitFor(4);
      const log = await eventually(async () => {
        const rows = await attempts(endpoint.id);
        return rows.length === 4 ? rows : undefined;
      });
      expect(log[0]).toMatchObject({ attempt: 4, outcome: 'failed', next_attempt_at: null });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.received).toHaveLength(4);
    });

    it('disables an endpoint that answers 410, skips its messages, and replays them once enabled again', async () => {
      const endpoint = await create();
      receiver.planned.push({ status: 410 });
      const since = new Date(Date.now() - 1000).toISOString();
      await lead('Primeiro');
      await receiver.waitFor(1);
      const disabled = await eventually(async () => {
        const res = await call('get', `/api/v1/webhooks/${endpoint.id}`);
        return res.body.status === 'disabled' ? res.body : undefined;
      });
      expect(disabled.disabled_reason).toContain('410');
      await lead('Segundo');
      const skipped = await eventually(async () => {
        const rows = await attempts(endpoint.id);
        return rows.some((row) => row.outcome === 'skipped') ? rows : undefined;
      });
      expect(skipped[0]).toMatchObject({ outcome: 'skipped', error: 'endpoint_disabled', status_code: null });
      expect(receiver.received).toHaveLength(1);

      const enabled = await call('patch', `/api/v1/webhooks/${endpoint.id}`, { status: 'enabled' });
      expect(enabled.body).toMatchObject({ status: 'enabled', disabled_reason: null });
      const replay = await call('post', `/api/v1/webhooks/${endpoint.id}/replay`, { since });
      expect(replay.status).toBe(202);
      expect(replay.body).toEqual({ replayed: 2 });
      const all = await receiver.waitFor(3);
      const ids = all.map((r) => r.headers['webhook-id']);
      // The first lead's message again, with its original id, and the skipped one.
      expect(ids[1] === ids[0] || ids[2] === ids[0]).toBe(true);
      expect(
        all
          .slice(1)
          .map((r) => JSON.parse(r.body).data.nome)
          .sort(),
      ).toEqual(['Primeiro', 'Segundo']);
    });

    it('refuses bad replays', async () => {
      const endpoint = await create();
      const res = await call('post', `/api/v1/webhooks/${endpoint.id}/replay`, { since: 'yesterday', until: 5 });
      expectProblem(res, 422, 'validation_failed');
      expect(res.body.errors.map((e: { pointer: string; code: string }) => [e.pointer, e.code])).toEqual([
        ['/since', 'invalid_date'],
        ['/until', 'invalid_type'],
      ]);
      const backwards = await call('post', `/api/v1/webhooks/${endpoint.id}/replay`, { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' });
      expect(backwards.body.errors).toEqual([expect.objectContaining({ pointer: '/until', code: 'out_of_range' })]);
    });

    it('signs with both secrets after a rotation', async () => {
      const endpoint = await create();
      const rotated = await call('post', `/api/v1/webhooks/${endpoint.id}/rotate-secret`);
      expect(rotated.status).toBe(200);
      expect(rotated.body).toEqual({ id: endpoint.id, secret: expect.stringMatching(/^whsec_/), previous_secret_expires_at: expect.any(String) });
      expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23.9 * 3600_000);
      await lead();
      const [delivery] = await receiver.waitFor(1);
      expect((delivery.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
      expect(verify(rotated.body.secret, delivery)).toBeTruthy();
      expect(verify(endpoint.secret, delivery)).toBeTruthy();
    });

    it('sends a webhook.test event to one endpoint on request', async () => {
      const endpoint = await create();
      const other = await WebhookReceiver.start();
      try {
        await create({ url: other.url });
        const res = await call('post', `/api/v1/webhooks/${endpoint.id}/test`);
        expect(res.status).toBe(202);
        expect(res.body).toEqual({ message_id: expect.stringMatching(/^msg_[0-9a-f]{32}$/), event_type: 'webhook.test' });
        const [delivery] = await receiver.waitFor(1);
        expect(delivery.headers['webhook-id']).toBe(res.body.message_id);
        expect(verify(endpoint.secret, delivery)).toMatchObject({ type: 'webhook.test', data: { endpoint_id: endpoint.id } });
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(other.received).toHaveLength(0);
      } finally {
        await other.close();
      }
    });

    it('reports the backlog on health', async () => {
      const health = await t.http.get('/api/v1/health').then(expectContract);
      expect(health.body.webhooks).toEqual({ pending: expect.any(Number), oldest_pending_age_seconds: null });
    });
  });
});

describe('webhooks: server-side request forgery', () => {
  let t: TestApp;
  let manager: string;
  let receiver: WebhookReceiver;
  let resolver: WebhookResolver;
  const names = new Map<string, string[]>();

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_POLL_INTERVAL: '20ms', WEBHOOK_RETRY_SCHEDULE: 'none' });
    manager = await operatorToken(t, 'webhooks:manage');
    receiver = await WebhookReceiver.start();
    resolver = t.app.get(WebhookResolver);
    // This machine has no internet: names resolve from this table.
    resolver.resolve = async (host) => (names.get(host) ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const create = (url: string) => t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url }).then(expectContract);

  it.each([
    ['http://hooks.example.com/', 'scheme_not_allowed'],
    ['https://0.0.0.0/', 'address_not_allowed'],
    ['https://127.0.0.1/', 'address_not_allowed'],
    ['https://10.1.2.3/', 'address_not_allowed'],
    ['https://172.16.0.1/', 'address_not_allowed'],
    ['https://192.168.1.1/', 'address_not_allowed'],
    ['https://169.254.169.254/latest/meta-data/', 'address_not_allowed'],
    ['https://100.64.0.1/', 'address_not_allowed'],
    ['https://224.0.0.1/', 'address_not_allowed'],
    ['https://[::]/', 'address_not_allowed'],
    ['https://[::1]/', 'address_not_allowed'],
    ['https://[fe80::1]/', 'address_not_allowed'],
    ['https://[fd00:ec2::254]/', 'address_not_allowed'],
    ['https://[ff02::1]/', 'address_not_allowed'],
    ['https://[::ffff:127.0.0.1]/', 'address_not_allowed'],
    ['https://[64:ff9b::a00:1]/', 'address_not_allowed'],
    ['https://[2002:7f00:1::]/', 'address_not_allowed'],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'address_not_allowed'],
    ['https://private.example.com/', 'address_not_allowed'],
    ['https://mixed.example.com/', 'address_not_allowed'],
    ['https://nowhere.example.com/', 'unresolvable_host'],
  ])('refuses %s at creation (%s)', async (url, code) => {
    names.set('private.example.com', ['192.168.0.10']);
    names.set('mixed.example.com', ['93.184.215.14', '::1']);
    const res = await create(url);
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '/url', code })]);
  });

  it('checks again the address it connects to: a name that later resolves to loopback is never reached', async () => {
    names.set('hooks.example.com', ['93.184.215.14']);
    const res = await create(`https://hooks.example.com:${new URL(receiver.url).port}/hook`);
    expect(res.status).toBe(201);
    // DNS rebinding: the name now points at this machine, where the receiver listens.
    names.set('hooks.example.com', ['127.0.0.1']);
    await t.http.post('/api/v1/lead').send({ nome: 'Ana', email: 'ana@example.com' }).expect(201);
    const log = await eventually(async () => {
      const rows = (await t.http.get(`/api/v1/webhooks/${res.body.id}/deliveries`).set('Authorization', `Bearer ${manager}`)).body.data;
      return rows.length ? rows : undefined;
    });
    expect(log[0]).toMatchObject({ outcome: 'failed', status_code: null, error: 'address_not_allowed: loopback' });
    expect(receiver.received).toHaveLength(0);
    const changed = await t.http.patch(`/api/v1/webhooks/${res.body.id}`).set('Authorization', `Bearer ${manager}`).send({ url: 'https://hooks.example.com/' });
    expectProblem(changed, 422, 'validation_failed');
  });
});

describe('webhooks: an endpoint failing for WEBHOOK_DISABLE_AFTER', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp({ ...FAST, WEBHOOK_DISABLE_AFTER: '1s', WEBHOOK_RETRY_SCHEDULE: Array(10).fill('300ms').join(',') });
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('is disabled with the reason shown, and nothing more is attempted', async () => {
    const manager = await operatorToken(t, 'webhooks:manage');
    const created = await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: receiver.url }).then(expectContract);
    receiver.fallback = { status: 500 };
    await t.http.post('/api/v1/lead').send({ nome: 'Ana', email: 'ana@example.com' }).expect(201);
    const endpoint = await eventually(async () => {
      const res = await t.http.get(`/api/v1/webhooks/${created.body.id}`).set('Authorization', `Bearer ${manager}`).then(expectContract);
      return res.body.status === 'disabled' ? res.body : undefined;
    });
    expect(endpoint.disabled_reason).toMatch(/^No successful delivery since \d{4}-\d{2}-\d{2}T.*Z \(WEBHOOK_DISABLE_AFTER\)\.$/);
    const attempts = receiver.received.length;
    expect(attempts).toBeGreaterThanOrEqual(4);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(receiver.received).toHaveLength(attempts);
  });
});

describe('webhooks: deliveries written with the lead', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let n = 0;

  beforeAll(async () => {
    // No worker: a delivery row found after a 201 was written by the lead's own transaction, not by the fan-out.
    t = await startTestApp({ ...FAST, WEBHOOK_WORKER: 'false' });
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  /** A lead's message as stored: whether it was written dispatched, and its deliveries. */
  const lead = async () => {
    const res = await t.http.post('/api/v1/lead').send({ nome: `Ana ${++n}`, email: `ana${n}@example.com` });
    expect(res.status).toBe(201);
    const [message] = (await t.dataSource.query(`SELECT id, dispatched_at FROM webhook_messages WHERE lead_id = '${res.body.id}'`)) as {
      id: string;
      dispatched_at: unknown;
    }[];
    const deliveries = (await t.dataSource.query(
      `SELECT endpoint_id, channel, state, attempts, step FROM webhook_deliveries WHERE message_id = '${message.id}'`,
    )) as Record<string, unknown>[];
    return { dispatched: message.dispatched_at !== null, deliveries };
  };
  const setStatus = (id: string, status: string) => t.dataSource.query(`UPDATE webhook_endpoints SET status = '${status}' WHERE id = '${id}'`);

  it('on SQLite, for the endpoints it knows, until any change to an endpoint: then the fan-out, until they are read again', async () => {
    const manager = await operatorToken(t, 'webhooks:manage');
    const created = await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: receiver.url });
    expect(created.status).toBe(201);
    const endpoint = created.body.id as string;
    const leftToFanOut = { dispatched: false, deliveries: [] };
    const withIt = { dispatched: true, deliveries: [{ endpoint_id: endpoint, channel: 'webhook', state: 'pending', attempts: 0, step: 0 }] };
    if (ON_POSTGRES) {
      // Another instance may change an endpoint at any time: the fan-out makes every delivery.
      for (let i = 0; i < 3; i++) expect(await lead()).toEqual(leftToFanOut);
      return;
    }
    // The creation moved the change count: the first lead goes to the fan-out, and the endpoints are read after it.
    expect(await lead()).toEqual(leftToFanOut);
    expect(await lead()).toEqual(withIt);
    expect(await lead()).toEqual(withIt);
    // Changed behind the service's back (any writer of the table: a trigger counts it), and disabled: a disabled
    // endpoint's delivery is skipped and logged, which the fan-out does.
    await setStatus(endpoint, 'disabled');
    expect(await lead()).toEqual(leftToFanOut);
    expect(await lead()).toEqual(leftToFanOut);
    await setStatus(endpoint, 'enabled');
    expect(await lead()).toEqual(leftToFanOut);
    expect(await lead()).toEqual(withIt);
  });
});
