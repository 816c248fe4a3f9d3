import type { Response } from 'supertest';
import { expectContract } from './support/contract.js';
import { countLeads, startTestApp, TestApp } from './support/test-app.js';

const LEAD = {
  nome: '  Maria    da\u00a0 Silva ',
  email: '  maria.Silva@Empresa.COM.br ',
  telefone: ' (11) 98765-4321 ',
  empresa: 'Empresa \u2003 Exemplo   Ltda.',
  mensagem: '  Gostaria de uma proposta.\n\n  Obrigada!  ',
  origem: ' site ',
};

/** A request body exactly as bytes go on the wire, with its Content-Type (or none). */
interface RawBody {
  contentType?: string;
  body: string | Buffer;
}

const json = (value: unknown): RawBody => ({ contentType: 'application/json', body: JSON.stringify(value) });

async function countRows(t: TestApp): Promise<{ leads: number; keys: number }> {
  const [{ n }] = await t.dataSource.query('SELECT COUNT(*) AS n FROM idempotency_keys');
  return { leads: await countLeads(t.dataSource), keys: Number(n) };
}

describe('POST /api/v1/sandbox', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const send = (path: string, raw: RawBody, headers: Record<string, string> = {}) => {
    let req = t.http.post(path).set(headers);
    if (raw.contentType !== undefined) req = req.set('Content-Type', raw.contentType);
    // Send the bytes as they are: superagent would otherwise re-serialise a Buffer or object as JSON.
    return req
      .serialize((body: string | Buffer) => body as string)
      .send(raw.body as string)
      .then(expectContract);
  };
  const sandbox = (body: unknown, headers: Record<string, string> = {}) => send('/api/v1/sandbox', json(body), headers);

  describe('valid input', () => {
    it('answers 200 with the normalised lead, as lead would store it', async () => {
      const res = await sandbox(LEAD);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toStrictEqual({
        valid: true,
        stored: false,
        lead: {
          nome: 'Maria da Silva',
          email: 'maria.Silva@empresa.com.br',
          telefone: '(11) 98765-4321',
          telefone_e164: '+5511987654321',
          empresa: 'Empresa Exemplo Ltda.',
          mensagem: 'Gostaria de uma proposta.\n\n  Obrigada!',
          origem: 'site',
        },
      });
    });

    it('omits absent optional fields', async () => {
      const res = await sandbox({ nome: 'Ana', email: 'ana@exemplo.com' });
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({ valid: true, stored: false, lead: { nome: 'Ana', email: 'ana@exemplo.com' } });
      expect(Object.keys(res.body.lead)).toEqual(['nome', 'email']);
    });

    it('normalises to NFC and keeps the local part of the e-mail as sent', async () => {
      const res = await sandbox({ nome: 'Jose\u0301  Conceic\u0327a\u0303o', email: 'Jose\u0301.X@DOMI\u0301NIO.Com', empresa: 'Cafe\u0301 Ltda' });
      expect(res.status).toBe(200);
      expect(res.body.lead).toStrictEqual({ nome: 'José Conceição', email: 'José.X@domínio.com', empresa: 'Café Ltda' });
      expect(res.body.lead.nome).toBe(res.body.lead.nome.normalize('NFC'));
    });

    it.each([
      ['an international number', '+55 21 2345-6789', '+552123456789'],
      ['a BR mobile with dots', '11.98765.4321', '+5511987654321'],
    ])('adds telefone_e164 for %s', async (_name, telefone, e164) => {
      const res = await sandbox({ nome: 'Ana', email: 'ana@exemplo.com', telefone });
      expect(res.status).toBe(200);
      expect(res.body.lead).toStrictEqual({ nome: 'Ana', email: 'ana@exemplo.com', telefone, telefone_e164: e164 });
    });

    it('keeps a telephone that is not a valid number, without telefone_e164', async () => {
      const res = await sandbox({ nome: 'Beto', email: 'beto@exemplo.com', telefone: '0000-0000' });
      expect(res.status).toBe(200);
      expect(res.body.lead).toStrictEqual({ nome: 'Beto', email: 'beto@exemplo.com', telefone: '0000-0000' });
    });

    it('returns exactly what the lead endpoint stores', async () => {
      const checked = await sandbox(LEAD);
      const created = await send('/api/v1/lead', json(LEAD));
      expect(created.status).toBe(201);
      const param = t.dataSource.options.type === 'postgres' ? '$1' : '?';
      const [row] = await t.dataSource.query(`SELECT nome, email, telefone, telefone_e164, empresa, mensagem, origem FROM leads WHERE id = ${param}`, [
        created.body.id,
      ]);
      expect(row).toEqual(checked.body.lead);
    });

    it('stores nothing: no lead, no idempotency key', async () => {
      const before = await countRows(t);
      for (const body of [LEAD, { nome: 'Ana', email: 'ana@exemplo.com' }, { nome: 'Ana' }]) await sandbox(body);
      await sandbox(LEAD, { 'Idempotency-Key': 'k-sandbox-store' });
      expect(await countRows(t)).toEqual(before);
    });
  });

  describe('invalid input: exactly the answer of POST /api/v1/lead', () => {
    /** name, body, status and code both must answer, and for 422 the `pointer:code` of each errors[] entry. */
    const cases: [string, RawBody, number, string, string[]?][] = [
      ['missing nome', json({ email: 'ana@exemplo.com' }), 422, 'validation_failed', ['/nome:required']],
      ['missing email', json({ nome: 'Ana' }), 422, 'validation_failed', ['/email:required']],
      ['empty object', json({}), 422, 'validation_failed', ['/nome:required', '/email:required']],
      ['nome is a number', json({ nome: 42, email: 'ana@exemplo.com' }), 422, 'validation_failed', ['/nome:invalid_type']],
      ['email is null', json({ nome: 'Ana', email: null }), 422, 'validation_failed', ['/email:invalid_type']],
      ['nested value', json({ nome: { first: 'Ana' }, email: 'ana@exemplo.com' }), 422, 'validation_failed', ['/nome:invalid_type']],
      ['unknown field', json({ nome: 'Ana', email: 'ana@exemplo.com', cpf: '123' }), 422, 'validation_failed', ['/cpf:unknown_field']],
      ['bidi override in nome', json({ nome: 'Ana\u202Egnp.exe', email: 'ana@exemplo.com' }), 422, 'validation_failed', ['/nome:invalid_characters']],
      ['NUL in empresa', json({ nome: 'Ana', email: 'ana@exemplo.com', empresa: 'A\u0000B' }), 422, 'validation_failed', ['/empresa:invalid_characters']],
      ['tab in nome', json({ nome: 'Ana\tMaria', email: 'ana@exemplo.com' }), 422, 'validation_failed', ['/nome:invalid_characters']],
      ['nome too long', json({ nome: 'a'.repeat(121), email: 'ana@exemplo.com' }), 422, 'validation_failed', ['/nome:too_long']],
      ['blank nome', json({ nome: '   ', email: 'ana@exemplo.com' }), 422, 'validation_failed', ['/nome:too_short']],
      ['bad email', json({ nome: 'Ana', email: 'ana@exemplo' }), 422, 'validation_failed', ['/email:invalid_format']],
      [
        'telephone with letters',
        json({ nome: 'Ana', email: 'ana@exemplo.com', telefone: '11 9876-ABCD' }),
        422,
        'validation_failed',
        ['/telefone:invalid_format'],
      ],
      // hostile values (docs/decisions/0002-lead-fields-and-normalisation.md, 0014-linear-regular-expressions.md)
      [
        'telephone without digits',
        json({ nome: 'Ana', email: 'ana@exemplo.com', telefone: '((((((((' }),
        422,
        'validation_failed',
        ['/telefone:invalid_format'],
      ],
      [
        'telephone of 2,500 spaces and 12345678x',
        json({ nome: 'Ana', email: 'ana@exemplo.com', telefone: `${' '.repeat(2500)}12345678x` }),
        422,
        'validation_failed',
        ['/telefone:invalid_format'],
      ],
      [
        'nome of invisible characters',
        json({ nome: '\u200b\u200d\u2060\u00ad\u3164\u2800\ufffc\u0301', email: 'ana@exemplo.com' }),
        422,
        'validation_failed',
        ['/nome:too_short'],
      ],
      [
        'tag characters in mensagem',
        json({ nome: 'Ana', email: 'ana@exemplo.com', mensagem: 'Oi\u{e0049}\u{e0067}' }),
        422,
        'validation_failed',
        ['/mensagem:invalid_characters'],
      ],
      ['IP-literal e-mail domain', json({ nome: 'Ana', email: 'ana@1.2.3.4' }), 422, 'validation_failed', ['/email:invalid_format']],
      ['e-mail local part of 65 octets', json({ nome: 'Ana', email: `${'a'.repeat(65)}@exemplo.com` }), 422, 'validation_failed', ['/email:invalid_format']],
      [
        'every field wrong',
        json({ nome: '', email: 'x', telefone: 'abc', empresa: 1, mensagem: [], origem: 'o'.repeat(65), extra: true }),
        422,
        'validation_failed',
        [
          '/nome:too_short',
          '/email:too_short',
          '/telefone:too_short',
          '/empresa:invalid_type',
          '/mensagem:invalid_type',
          '/origem:too_long',
          '/extra:unknown_field',
        ],
      ],
      [
        'duplicate key',
        { contentType: 'application/json', body: '{"nome":"Ana","nome":"Bia","email":"ana@exemplo.com"}' },
        422,
        'validation_failed',
        ['/nome:duplicate_key'],
      ],
      [
        '__proto__ key',
        { contentType: 'application/json', body: '{"nome":"Ana","email":"ana@exemplo.com","__proto__":{"x":1}}' },
        422,
        'validation_failed',
        ['/__proto__:forbidden_key'],
      ],
      ['array body', json([{ nome: 'Ana', email: 'ana@exemplo.com' }]), 400, 'body_not_object'],
      ['null body', json(null), 400, 'body_not_object'],
      ['string body', json('nome=Ana'), 400, 'body_not_object'],
      ['malformed JSON', { contentType: 'application/json', body: '{"nome": "Ana",' }, 400, 'malformed_json'],
      ['empty body', { contentType: 'application/json', body: '' }, 400, 'malformed_json'],
      [
        'invalid UTF-8',
        { contentType: 'application/json', body: Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]) },
        400,
        'invalid_encoding',
      ],
      ['text/plain', { contentType: 'text/plain', body: JSON.stringify({ nome: 'Ana', email: 'ana@exemplo.com' }) }, 415, 'unsupported_media_type'],
      ['form-encoded', { contentType: 'application/x-www-form-urlencoded', body: 'nome=Ana&email=ana%40exemplo.com' }, 415, 'unsupported_media_type'],
      [
        'charset latin1',
        { contentType: 'application/json; charset=iso-8859-1', body: '{"nome":"Ana","email":"ana@exemplo.com"}' },
        415,
        'unsupported_media_type',
      ],
      ['no Content-Type', { body: Buffer.from('{"nome":"Ana","email":"ana@exemplo.com"}') }, 415, 'unsupported_media_type'],
      ['body over 32 KiB', json({ nome: 'Ana', email: 'ana@exemplo.com', mensagem: 'x'.repeat(33 * 1024) }), 413, 'payload_too_large'],
    ];

    /** The body minus what names the request itself. */
    const comparable = (res: Response) => {
      const { instance, request_id, ...rest } = res.body as Record<string, unknown>;
      expect(typeof instance).toBe('string');
      expect(typeof request_id).toBe('string');
      return rest;
    };

    // Rows padded to five entries: jest would take a fifth parameter missing from a row for a `done` callback.
    it.each(cases.map(([name, raw, status, code, fieldErrors]) => [name, raw, status, code, fieldErrors] as const))(
      '%s',
      async (_name, raw, status, code, fieldErrors) => {
        const before = await countRows(t);
        const lead = await send('/api/v1/lead', raw);
        const checked = await send('/api/v1/sandbox', raw);
        expect(lead.status).toBe(status);
        expect(lead.body.code).toBe(code);
        expect(lead.body.errors?.map((e: { pointer: string; code: string }) => `${e.pointer}:${e.code}`)).toEqual(fieldErrors);
        expect(checked.status).toBe(lead.status);
        expect(checked.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(checked.headers['content-type']).toBe(lead.headers['content-type']);
        expect(comparable(checked)).toStrictEqual(comparable(lead));
        expect(checked.body.instance).toBe('/api/v1/sandbox');
        expect(checked.body.request_id).toBe(checked.headers['x-request-id']);
        expect(await countRows(t)).toEqual(before);
      },
    );
  });

  describe('Idempotency-Key', () => {
    it('is ignored: the same key with different bodies is not "reused", and a malformed key is no error', async () => {
      const key = { 'Idempotency-Key': 'k-sandbox' };
      const first = await sandbox({ nome: 'Ana', email: 'ana@exemplo.com' }, key);
      const second = await sandbox({ nome: 'Bia', email: 'bia@exemplo.com' }, key);
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.body.lead).toStrictEqual({ nome: 'Bia', email: 'bia@exemplo.com' });
      for (const malformed of ['""', 'x'.repeat(256), 'chave-ção']) {
        const res = await sandbox({ nome: 'Ana', email: 'ana@exemplo.com' }, { 'Idempotency-Key': malformed });
        expect(res.status).toBe(200);
      }
    });

    it('does not claim the key for the lead endpoint', async () => {
      const key = { 'Idempotency-Key': 'k-sandbox-then-lead' };
      const checked = await sandbox({ nome: 'Ana', email: 'ana@exemplo.com' }, key);
      expect(checked.status).toBe(200);
      const created = await send('/api/v1/lead', json({ nome: 'Bia', email: 'bia@exemplo.com' }), key);
      expect(created.status).toBe(201);
    });

    it('is not replayed from the lead endpoint either', async () => {
      const key = { 'Idempotency-Key': 'k-lead-then-sandbox' };
      const created = await send('/api/v1/lead', json({ nome: 'Ana', email: 'ana@exemplo.com' }), key);
      expect(created.status).toBe(201);
      const checked = await sandbox({ nome: 'Carla', email: 'carla@exemplo.com' }, key);
      expect(checked.status).toBe(200);
      expect(checked.body).toStrictEqual({ valid: true, stored: false, lead: { nome: 'Carla', email: 'carla@exemplo.com' } });
    });
  });

  it('refuses other methods with 405 and Allow: POST', async () => {
    const res = await t.http.get('/api/v1/sandbox').then(expectContract);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.body.code).toBe('method_not_allowed');
  });
});
