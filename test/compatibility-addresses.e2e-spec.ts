/** @database leads stored before with a compatibility address */
import type { Response } from 'supertest';
import { Lead } from '../src/leads/lead.entity.js';
import { expectContract } from './support/contract.js';
import { operatorToken } from './support/operator-token.js';
import { storedLead } from './support/stored-leads.js';
import { countLeads, startTestApp, TestApp } from './support/test-app.js';

/**
 * Compatibility characters make two addresses one person (issue 32, docs/decisions/0002-lead-fields-and-normalisation.md):
 * an address with a character that Unicode NFKC replaces is refused on every surface that takes one, with a detail that
 * says why; a lead stored before with one keeps it and matches only its own address. Every response is checked
 * against the contract.
 */

const ADDRESSES: [string, string, string][] = [
  ['the Kelvin sign', '\u212Aate@exemplo.com.br', 'U+212A'],
  ['a fullwidth letter', '\uFF4Bate@exemplo.com.br', 'U+FF4B'],
  ['the theta symbol', '\u03F4eo@exemplo.gr', 'U+03F4'],
  ['a ligature in the domain', 'ana@\uFB01rma.com.br', 'U+FB01'],
];

function expectRefused(res: Response, pointer: string, code: string): void {
  expect([res.status, res.body.code]).toEqual([422, 'validation_failed']);
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const errors = res.body.errors as { pointer: string; code: string; detail: string }[];
  expect(errors.map((error) => [error.pointer, error.code])).toEqual([[pointer, 'invalid_format']]);
  expect(errors[0].detail).toContain(`(${code}), a variant form of`);
  expect(errors[0].detail).toContain("looks like another person's address");
}

/** The JSON-RPC messages of an MCP answer, as JSON or as server-sent events. */
function mcpMessages(res: Response): Record<string, any>[] {
  if (!String(res.headers['content-type']).startsWith('text/event-stream')) return [res.body];
  return res.text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5)));
}

describe('addresses with compatibility characters', () => {
  let t: TestApp;
  let reader: string;
  let eraser: string;

  beforeAll(async () => {
    t = await startTestApp();
    reader = await operatorToken(t, 'leads:read');
    eraser = await operatorToken(t, 'leads:erase');
  });
  afterAll(() => t.close());

  const post = (path: string, body: unknown, token?: string) =>
    t.http
      .post(path)
      .set(token ? { Authorization: `Bearer ${token}` } : {})
      .send(body as object)
      .then(expectContract);
  const list = (email: string) => t.http.get('/api/v1/leads').query({ email }).set('Authorization', `Bearer ${reader}`).then(expectContract);

  describe.each(ADDRESSES)('an address with %s', (_name, email, code) => {
    it('is refused as a lead and in the sandbox, and nothing is stored', async () => {
      const before = await countLeads(t.dataSource);
      for (const path of ['/api/v1/lead', '/api/v1/sandbox']) expectRefused(await post(path, { nome: 'Kate', email: `  ${email} ` }), '/email', code);
      expect(await countLeads(t.dataSource)).toBe(before);
    });

    it('is refused by the MCP validate_lead and submit_lead tools', async () => {
      for (const name of ['validate_lead', 'submit_lead']) {
        const res = await t.http
          .post('/mcp')
          .set({ Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' })
          .send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { nome: 'Kate', email } } }))
          .then(expectContract);
        const [message] = mcpMessages(res);
        expect(message.result.isError).toBe(true);
        expect(message.result.structuredContent.errors).toEqual([expect.objectContaining({ pointer: '/email', code: 'invalid_format' })]);
        expect(message.result.structuredContent.errors[0].detail).toContain(code);
      }
    });

    it('is refused by access, erasure and consent-revocation requests', async () => {
      expectRefused(await post('/api/v1/data-subject-requests/access', { email }, reader), '/email', code);
      expectRefused(await post('/api/v1/data-subject-requests/erasure', { email }, eraser), '/email', code);
      expectRefused(await post('/api/v1/data-subject-requests/erasure', { email, dry_run: true }, eraser), '/email', code);
      expectRefused(await post('/api/v1/data-subject-requests/consent-revocation', { email }, eraser), '/email', code);
    });

    it('is refused as an agent identity verified_email and as a contact', async () => {
      expectRefused(
        await post('/api/v1/agent/identity', { type: 'identity_assertion', assertion_type: 'verified_email', assertion: email }),
        '/assertion',
        code,
      );
      expectRefused(await post('/api/v1/agent/identity', { type: 'anonymous', contacts: ['dev@exemplo.com.br', email] }), '/contacts/1', code);
    });
  });

  describe('a lead stored before, with ϴ (U+03F4, lower-cased θ) in its address', () => {
    let legacy: Lead;
    let real: string;

    beforeAll(async () => {
      // As the service stored it then (NFC, domain lower-cased), with email_folded as the migration leaves it.
      legacy = storedLead(1, { email: '\u03F4eo@exemplo.gr', nome: 'Planted' });
      await t.dataSource.getRepository(Lead).insert(legacy);
      real = (await post('/api/v1/lead', { nome: 'Theo', email: 'Θeo@Exemplo.gr' })).body.id;
    });

    it('is not among the leads of the address it looks like, on the read API', async () => {
      for (const email of ['θeo@exemplo.gr', 'ΘEO@EXEMPLO.GR']) {
        const res = await list(email);
        expect(res.status).toBe(200);
        expect(res.body.data.map((lead: { id: string }) => lead.id)).toEqual([real]);
      }
    });

    it('matches only its own address: as stored, the domain in any case', async () => {
      expect((await list('\u03F4eo@EXEMPLO.gr')).body.data.map((lead: { id: string }) => lead.id)).toEqual([legacy.id]);
      expect((await list('\u03F4EO@exemplo.gr')).body.data).toEqual([]);
    });

    it('is neither handed over nor erased by requests for the address it looks like', async () => {
      const access = await post('/api/v1/data-subject-requests/access', { email: 'θeo@exemplo.gr' }, reader);
      expect(access.status).toBe(200);
      expect(JSON.stringify(access.body)).toContain(real);
      expect(JSON.stringify(access.body)).not.toContain(legacy.id);
      const erasure = await post('/api/v1/data-subject-requests/erasure', { email: 'θeo@exemplo.gr' }, eraser);
      expect(erasure.status).toBe(200);
      expect(erasure.body.lead_ids).toEqual([real]);
      const left = (await t.dataSource.getRepository(Lead).findBy({})).map((lead) => lead.id);
      expect(left).toContain(legacy.id);
      expect(left).not.toContain(real);
    });
  });
});
