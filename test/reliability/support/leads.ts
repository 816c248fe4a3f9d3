import type { TestDatabase } from '../../support/database.js';
import { HttpClient, JSON_HEADERS, Reply } from './http-client.js';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
let sequence = 0;

/** A valid lead whose every field follows from `tag` (kept in `mensagem`), so that a retry sends the very same body. */
export function leadBody(tag: string): string {
  return JSON.stringify({ nome: 'Pessoa Confiável', email: `${tag}@exemplo.com.br`, telefone: '+55 11 98765-4321', mensagem: tag, origem: 'reliability' });
}

/** What the service promised about leads: every id it answered 201 for, and the requests whose answer never came. */
export class LeadLedger {
  readonly acknowledged = new Set<string>();
  /** Idempotency-Key → the id first answered for it. */
  readonly keyed = new Map<string, string>();
  /** Keys whose request got no answer (the server died, the connection was cut): stored or not, nobody knows yet. */
  readonly unansweredKeys = new Set<string>();
  /** Requests without a key that got no answer. */
  unanswered = 0;
  /** Replays of a key that answered another id than the first time: each one a broken promise. */
  readonly mismatches: string[] = [];

  /** POSTs a lead (anonymous, or with a bearer token; with an Idempotency-Key when `key` is given) and books the answer. */
  async post(client: HttpClient, { token, key }: { token?: string; key?: string } = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...JSON_HEADERS };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (key) headers['Idempotency-Key'] = key;
    const reply = await client.send({ method: 'POST', path: '/api/v1/lead', headers, body: leadBody(key ?? `lead-${process.pid}-${++sequence}`) });
    if (reply.status === 201) {
      const { id } = JSON.parse(reply.body) as { id: string };
      this.acknowledged.add(id);
      if (key) {
        const first = this.keyed.get(key);
        if (first !== undefined && first !== id) this.mismatches.push(`${key}: ${first} then ${id}`);
        this.keyed.set(key, first ?? id);
        this.unansweredKeys.delete(key);
      }
    } else if (reply.status === 0) {
      if (key) this.unansweredKeys.add(key);
      else this.unanswered++;
    }
    return reply;
  }

  /** Acknowledged leads missing from the database, and how many rows it holds. */
  async verify(database: TestDatabase): Promise<{ stored: number; missing: string[] }> {
    const stored = new Set((await database.query<{ id: string }>('SELECT id FROM leads')).map((row) => String(row.id)));
    return { stored: stored.size, missing: [...this.acknowledged].filter((id) => !stored.has(id)) };
  }
}

export const register = (client: HttpClient): Promise<Reply> =>
  client.send({
    method: 'POST',
    path: '/api/v1/agent/identity',
    headers: JSON_HEADERS,
    body: JSON.stringify({ type: 'anonymous', client_name: 'reliability' }),
  });

export const exchange = (client: HttpClient, assertion: string): Promise<Reply> =>
  client.send({
    method: 'POST',
    path: '/oauth2/token',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }).toString(),
  });

/** Registers an agent through one client and exchanges its assertion through another (the same by default): an access token. */
export async function agentToken(registrar: HttpClient, exchanger = registrar): Promise<string> {
  const registered = await register(registrar);
  if (registered.status !== 200) throw new Error(`registration answered ${registered.status || registered.error}: ${registered.body}`);
  const token = await exchange(exchanger, (JSON.parse(registered.body) as { identity_assertion: string }).identity_assertion);
  if (token.status !== 200) throw new Error(`token exchange answered ${token.status || token.error}: ${token.body}`);
  return (JSON.parse(token.body) as { access_token: string }).access_token;
}
