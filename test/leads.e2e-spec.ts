/** @database stored rows and the idempotency store */
import { IdempotencyKey } from '../src/leads/idempotency-key.entity.js';
import { LeadValidationService } from '../src/leads/lead-validation.service.js';
import { leadFingerprint } from '../src/leads/leads.service.js';
import { expectContract } from './support/contract.js';
import { countLeads, startTestApp, TestApp } from './support/test-app.js';

const LEAD = {
  nome: '  Maria   da  Silva ',
  email: 'maria.silva@Empresa.COM.br',
  telefone: '(11) 98765-4321',
  empresa: 'Empresa  Exemplo Ltda.',
  mensagem: 'Gostaria de uma proposta.\nObrigada!',
  origem: 'site',
};

describe('POST /api/v1/lead', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1' });
  });
  afterAll(() => t.close());

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    t.http
      .post('/api/v1/lead')
      .set(headers)
      .send(body as object)
      .then(expectContract);

  it('stores a valid lead and answers 201 with its receipt', async () => {
    const res = await post(LEAD);
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Object.keys(res.body).sort()).toEqual(['id', 'received_at', 'status']);
    expect(res.body.status).toBe('received');
    expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Math.abs(Date.parse(res.body.received_at) - Date.now())).toBeLessThan(10_000);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);

    const [row] = await t.dataSource.query('SELECT * FROM leads WHERE id = $1'.replace('$1', t.dataSource.options.type === 'postgres' ? '$1' : '?'), [
      res.body.id,
    ]);
    expect(row).toMatchObject({
      nome: 'Maria da Silva',
      email: 'maria.silva@empresa.com.br',
      telefone: '(11) 98765-4321',
      telefone_e164: '+5511987654321',
      empresa: 'Empresa Exemplo Ltda.',
      mensagem: 'Gostaria de uma proposta.\nObrigada!',
      origem: 'site',
      email_folded: 'maria.silva@empresa.com.br',
      channel: 'api',
      registration_id: null,
      client_id: null,
    });
    expect(new Date(row.received_at).toISOString()).toBe(res.body.received_at);
  });

  it('accepts the minimal lead and leaves optional columns empty', async () => {
    const res = await post({ nome: 'Ana', email: 'ana@exemplo.com' });
    expect(res.status).toBe(201);
    const [row] = await t.dataSource.query(`SELECT telefone, telefone_e164, empresa, mensagem, origem FROM leads WHERE email = 'ana@exemplo.com'`);
    expect(row).toEqual({ telefone: null, telefone_e164: null, empresa: null, mensagem: null, origem: null });
  });

  it('keeps the local part of the e-mail as sent, lower-cases the domain and normalises to NFC', async () => {
    const res = await post({ nome: 'Jose\u0301', email: 'Jose.X@DOMINIO.Com' });
    expect(res.status).toBe(201);
    const [row] = await t.dataSource.query(`SELECT nome, email FROM leads WHERE email = 'Jose.X@dominio.com'`);
    expect(row).toEqual({ nome: 'José', email: 'Jose.X@dominio.com' });
  });

  it('stores no E.164 form for a telephone that is not a valid number', async () => {
    await post({ nome: 'Beto', email: 'beto@exemplo.com', telefone: '0000-0000' }).then((r) => expect(r.status).toBe(201));
    const [row] = await t.dataSource.query(`SELECT telefone, telefone_e164 FROM leads WHERE email = 'beto@exemplo.com'`);
    expect(row).toEqual({ telefone: '0000-0000', telefone_e164: null });
  });

  describe('Idempotency-Key', () => {
    it('replays the first answer for the same key and body, storing one row', async () => {
      const before = await countLeads(t.dataSource);
      const first = await post(LEAD, { 'Idempotency-Key': '"k-replay-1"' });
      const second = await post({ ...LEAD, nome: 'Maria da Silva' }, { 'Idempotency-Key': '"k-replay-1"' });
      const bare = await post(LEAD, { 'Idempotency-Key': 'k-replay-1' });
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.body).toEqual(first.body);
      expect(bare.body).toEqual(first.body);
      expect(await countLeads(t.dataSource)).toBe(before + 1);
    });

    it('refuses the same key with a different body: 422 idempotency_key_reused, nothing stored', async () => {
      await post(LEAD, { 'Idempotency-Key': 'k-reuse' });
      const before = await countLeads(t.dataSource);
      const res = await post({ ...LEAD, origem: 'outra' }, { 'Idempotency-Key': 'k-reuse' });
      expect(res.status).toBe(422);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.body).toMatchObject({ code: 'idempotency_key_reused', status: 422, type: 'http://leads.test/docs/errors#idempotency_key_reused' });
      expect(await countLeads(t.dataSource)).toBe(before);
    });

    it('answers 409 while a request with the same key is still in flight', async () => {
      const scope = `ip:10.9.9.9`;
      await insertPendingKey(t, scope, 'k-inflight', new Date());
      const res = await post(LEAD, { 'Idempotency-Key': 'k-inflight', 'X-Forwarded-For': '10.9.9.9' });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('idempotency_request_in_progress');
      expect(res.headers['retry-after']).toBe('1');
    });

    it('takes over a key whose first request died long ago and stores the lead once', async () => {
      await insertPendingKey(t, 'ip:10.9.9.8', 'k-stale', new Date(Date.now() - 5 * 60_000));
      const res = await post(LEAD, { 'Idempotency-Key': 'k-stale', 'X-Forwarded-For': '10.9.9.8' });
      expect(res.status).toBe(201);
      const again = await post(LEAD, { 'Idempotency-Key': 'k-stale', 'X-Forwarded-For': '10.9.9.8' });
      expect(again.body).toEqual(res.body);
    });

    it('scopes keys per caller: another client with the same key gets its own lead', async () => {
      const a = await post(LEAD, { 'Idempotency-Key': 'k-shared', 'X-Forwarded-For': '10.0.0.1' });
      const b = await post(LEAD, { 'Idempotency-Key': 'k-shared', 'X-Forwarded-For': '10.0.0.2' });
      expect(a.status).toBe(201);
      expect(b.status).toBe(201);
      expect(b.body.id).not.toBe(a.body.id);
    });

    it('keys callers by a real address: a forwarded value that is not an IP cannot break the store', async () => {
      const res = await post(LEAD, { 'Idempotency-Key': 'k-long-ip', 'X-Forwarded-For': 'x'.repeat(400) });
      expect(res.status).toBe(201);
      const [row] = await t.dataSource.query(`SELECT scope FROM idempotency_keys WHERE key = 'k-long-ip'`);
      expect(row.scope).toMatch(/^ip:(::ffff:)?127\.0\.0\.1$|^ip:::1$/);
    });

    it('forgets keys after 24 hours', async () => {
      const first = await post(LEAD, { 'Idempotency-Key': 'k-expired', 'X-Forwarded-For': '10.0.0.3' });
      await t.dataSource.query(
        `UPDATE idempotency_keys SET expires_at = ${t.dataSource.options.type === 'postgres' ? `now() - interval '1 second'` : `'2000-01-01 00:00:00.000'`} WHERE key = 'k-expired'`,
      );
      const second = await post({ ...LEAD, origem: 'depois' }, { 'Idempotency-Key': 'k-expired', 'X-Forwarded-For': '10.0.0.3' });
      expect(second.status).toBe(201);
      expect(second.body.id).not.toBe(first.body.id);
    });

    it('does not remember invalid requests: a corrected retry with the same key is stored', async () => {
      const bad = await post({ nome: 'Ana' }, { 'Idempotency-Key': 'k-fixed' });
      expect(bad.status).toBe(422);
      const good = await post({ nome: 'Ana', email: 'ana@ok.com' }, { 'Idempotency-Key': 'k-fixed' });
      expect(good.status).toBe(201);
    });

    it.each([
      ['empty', '""'],
      ['too long', 'x'.repeat(256)],
      ['non-ASCII', 'chave-ção'],
      ['unterminated quoted', '"abc'],
    ])('refuses a %s key with 400 idempotency_key_invalid', async (_name, key) => {
      const before = await countLeads(t.dataSource);
      const res = await post(LEAD, { 'Idempotency-Key': key });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('idempotency_key_invalid');
      expect(await countLeads(t.dataSource)).toBe(before);
    });

    it('refuses a repeated Idempotency-Key header', async () => {
      const res = await t.http
        .post('/api/v1/lead')
        .set('Content-Type', 'application/json')
        .set('Idempotency-Key', ['a', 'b'] as unknown as string) // two header lines
        .send(JSON.stringify(LEAD))
        .then(expectContract);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('idempotency_key_invalid');
    });

    it('keeps replaying after concurrent duplicates: exactly one row per key', async () => {
      const before = await countLeads(t.dataSource);
      const answers = await Promise.all(Array.from({ length: 8 }, () => post(LEAD, { 'Idempotency-Key': 'k-concurrent' })));
      const created = answers.filter((r) => r.status === 201);
      expect(answers.every((r) => r.status === 201 || r.status === 409)).toBe(true);
      expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
      expect(await countLeads(t.dataSource)).toBe(before + 1);
    });
  });
});

async function insertPendingKey(t: TestApp, scope: string, key: string, createdAt: Date): Promise<void> {
  await t.dataSource
    .createQueryBuilder()
    .insert()
    .into(IdempotencyKey)
    .values({
      scope,
      key,
      fingerprint: leadFingerprint(new LeadValidationService().validate(LEAD)),
      leadId: '01890000-0000-7000-8000-000000000000',
      state: 'pending',
      createdAt,
      expiresAt: new Date(Date.now() + 3_600_000),
    })
    .execute();
}
