import { BODY_LIMIT_BYTES as BODY_LIMIT } from '../../../src/server/http-limits.js';
import { HttpClient, JSON_HEADERS, Reply } from './http-client.js';
import { agentToken, exchange, LeadLedger, leadBody, register } from './leads.js';

/**
 * The traffic of scenario 1: every public door at once, each request kind with the statuses it may get. 429 is always
 * allowed (the limits are high but still limits); anything else unexpected is collected for the failure message.
 */
export class MixedTraffic {
  readonly ledger = new LeadLedger();
  /** "kind → status" → how often, and one body. */
  readonly unexpected = new Map<string, { count: number; sample: string }>();
  private readonly tokens: string[] = [];
  private keys = 0;

  private readonly kinds: [weight: number, run: () => Promise<unknown>][] = [
    [24, async () => this.check('lead', await this.ledger.post(this.client), 201)],
    [10, async () => this.check('lead with bearer token', await this.ledger.post(this.client, { token: this.anyToken() }), 201)],
    [8, () => this.idempotentLead()],
    [8, () => this.request('sandbox', [200], { method: 'POST', path: '/api/v1/sandbox', headers: JSON_HEADERS, body: leadBody('sandbox') })],
    [4, () => this.request('sandbox, invalid', [422], { method: 'POST', path: '/api/v1/sandbox', headers: JSON_HEADERS, body: '{"nome":"","email":"no"}' })],
    [10, () => this.request('health', [200], { path: '/api/v1/health' })],
    [6, () => this.request('info', [200], { path: '/api/v1/info' })],
    [6, () => this.graphql()],
    [6, () => this.request('malformed JSON', [400], { method: 'POST', path: '/api/v1/lead', headers: JSON_HEADERS, body: '{"nome": "Ana",' })],
    [
      4,
      () =>
        this.request('oversize body', [413], {
          method: 'POST',
          path: '/api/v1/lead',
          headers: JSON_HEADERS,
          body: JSON.stringify({ nome: 'x'.repeat(BODY_LIMIT) }),
        }),
    ],
    [
      5,
      () =>
        this.request('wrong media type', [415], { method: 'POST', path: '/api/v1/lead', headers: { 'Content-Type': 'text/plain' }, body: leadBody('text') }),
    ],
    [3, () => this.registerAgent()],
  ];
  private readonly totalWeight = this.kinds.reduce((sum, [weight]) => sum + weight, 0);

  constructor(private readonly client: HttpClient) {}

  /** Agents for the bearer requests from the start; more register during the run. */
  async prepare(agents: number): Promise<void> {
    for (let i = 0; i < agents; i++) this.tokens.push(await agentToken(this.client));
  }

  /** One request kind, drawn by weight. */
  async step(): Promise<void> {
    let draw = Math.random() * this.totalWeight;
    for (const [weight, run] of this.kinds) {
      draw -= weight;
      if (draw < 0) {
        await run();
        return;
      }
    }
  }

  private check(kind: string, reply: Reply, ...expected: number[]): Reply {
    if (reply.status !== 429 && !expected.includes(reply.status)) this.note(`${kind} → ${reply.error ?? reply.status}`, reply.body);
    return reply;
  }

  private note(what: string, body: string): void {
    const entry = this.unexpected.get(what) ?? { count: 0, sample: body.slice(0, 300) };
    entry.count++;
    this.unexpected.set(what, entry);
  }

  private async request(kind: string, expected: number[], call: Parameters<HttpClient['send']>[0]): Promise<Reply> {
    return this.check(kind, await this.client.send(call), ...expected);
  }

  /** The same key and body twice: both 201, the second a replay of the first (the ledger compares the ids). */
  private async idempotentLead(): Promise<void> {
    const key = `mix-${process.pid}-${++this.keys}`;
    for (let i = 0; i < 2; i++) this.check('lead with Idempotency-Key', await this.ledger.post(this.client, { key }), 201);
  }

  private async graphql(): Promise<void> {
    const reply = await this.request('graphql', [200], {
      method: 'POST',
      path: '/api/v1/graphql',
      headers: JSON_HEADERS,
      body: JSON.stringify({ query: '{ health { status checks { database } } site { brand } }' }),
    });
    if (reply.status === 200 && (JSON.parse(reply.body) as { errors?: unknown }).errors) this.note('graphql → 200 with errors', reply.body);
  }

  private async registerAgent(): Promise<void> {
    const registered = this.check('agent registration', await register(this.client), 200);
    if (registered.status !== 200) return;
    const token = this.check('token exchange', await exchange(this.client, JSON.parse(registered.body).identity_assertion), 200);
    if (token.status === 200) this.tokens.push(JSON.parse(token.body).access_token);
  }

  private anyToken(): string {
    return this.tokens[Math.floor(Math.random() * this.tokens.length)];
  }
}
