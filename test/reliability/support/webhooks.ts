import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import type { ReceivedWebhook } from '../../support/webhook-receiver.js';
import { HttpClient, JSON_HEADERS } from './http-client.js';
import { waitFor } from './load.js';

/**
 * The service key that seals webhook secrets (docs/decisions/0027-webhooks-outbox.md, Secrets): one fixed key for
 * every process of a scenario, so that a restarted instance, and a second instance on the same database, open the
 * secrets the first one sealed.
 */
export const SECRETS_KEY = Buffer.alloc(32, 'reliability-webhooks').toString('base64');

/** What every service process of the webhook scenarios gets besides its database: quick retries, a local receiver. */
export const WEBHOOK_ENV = {
  SECRETS_KEY,
  WEBHOOKS_ALLOW_PRIVATE: 'true',
  WEBHOOK_RETRY_SCHEDULE: '200ms,500ms,1s,1s,2s,2s,2s,2s',
  WEBHOOK_POLL_INTERVAL: '100ms',
  WEBHOOK_TIMEOUT: '2s',
};

/** The lease of a claimed delivery (WEBHOOK_TIMEOUT + 15 s): how long a dead PostgreSQL instance's deliveries wait. */
export const LEASE_MS = 2_000 + 15_000;

const CLIENTS_COMMAND = fileURLToPath(new URL('../../../dist/src/oauth/operator-clients.command.js', import.meta.url));

/**
 * An operator access token with `scope` (`webhooks:manage` unless said), the way an operator gets one: `npm run
 * clients:create` (its built command, on the scenario's database) for the client, then the client-credentials grant over HTTP.
 */
export async function operatorToken(client: HttpClient, databaseEnv: Record<string, string>, scope = 'webhooks:manage'): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [CLIENTS_COMMAND, 'create', '--name', `reliability ${scope}`, '--scope', scope], {
    env: { PATH: process.env.PATH, ...databaseEnv, SECRETS_KEY, LOG_LEVEL: 'warn' },
  });
  const { client_id, client_secret } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { client_id: string; client_secret: string };
  const reply = await client.send({
    method: 'POST',
    path: '/oauth2/token',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id, client_secret }).toString(),
  });
  if (reply.status !== 200) throw new Error(`token request answered ${reply.status || reply.error}: ${reply.body}`);
  return (JSON.parse(reply.body) as { access_token: string }).access_token;
}

export interface Endpoint {
  id: string;
  secret: string;
}

/** POST /api/v1/webhooks: an endpoint for `lead.received` at `url`, with its secret (shown this once). */
export async function createEndpoint(client: HttpClient, token: string, url: string): Promise<Endpoint> {
  const reply = await client.send({
    method: 'POST',
    path: '/api/v1/webhooks',
    headers: { ...JSON_HEADERS, Authorization: `Bearer ${token}` },
    body: JSON.stringify({ url, events: ['lead.received'], description: 'reliability' }),
  });
  if (reply.status !== 201) throw new Error(`creating the endpoint answered ${reply.status || reply.error}: ${reply.body}`);
  return JSON.parse(reply.body) as Endpoint;
}

export interface Attempt {
  message_id: string;
  event_type: string;
  attempt: number;
  outcome: 'succeeded' | 'failed' | 'skipped';
  status_code: number | null;
  error: string | null;
}

/** The endpoint's whole attempt log, through GET /api/v1/webhooks/{id}/deliveries, page after page. */
export async function attemptLog(client: HttpClient, token: string, endpointId: string): Promise<Attempt[]> {
  const all: Attempt[] = [];
  let cursor: string | null = null;
  do {
    const query: string = new URLSearchParams({ limit: '200', ...(cursor ? { cursor } : {}) }).toString();
    const reply = await client.send({ path: `/api/v1/webhooks/${endpointId}/deliveries?${query}`, headers: { Authorization: `Bearer ${token}` } });
    if (reply.status !== 200) throw new Error(`the deliveries API answered ${reply.status || reply.error}: ${reply.body}`);
    const page = JSON.parse(reply.body) as { data: Attempt[]; next_cursor: string | null };
    all.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

/** The webhook backlog in health (deliveries pending and messages not fanned out); undefined when health cannot say. */
export async function pendingWebhooks(client: HttpClient): Promise<number | undefined> {
  const reply = await client.send({ path: '/api/v1/health' });
  try {
    return (JSON.parse(reply.body) as { webhooks?: { pending: number } | null }).webhooks?.pending;
  } catch {
    return undefined;
  }
}

/** What the receiver got, checked against what the service acknowledged. */
export interface Deliveries {
  /** Requests the receiver answered 2xx, by webhook-id. */
  delivered: Map<string, number>;
  /** Every request, whatever the receiver answered. */
  requests: number;
  /** Lead ids (`data.id`) of the requests answered 2xx. */
  leads: Set<string>;
  /** webhook-ids answered 2xx more than once. */
  duplicates: string[];
  /** Second and later 2xx answers for one webhook-id, in all. */
  extraDeliveries: number;
  /** Requests whose signature, timestamp or headers standardwebhooks refused, or whose body was not a lead.received event. */
  invalid: string[];
  /** Acknowledged leads (201) with no 2xx delivery. */
  missing: string[];
  /** Leads delivered that were never acknowledged: stored by a request cut by the kill, or sent elsewhere. */
  unacknowledged: number;
}

/** Checks every request the receiver got with standardwebhooks against `secret`, and matches them to `acknowledged` leads. */
export function deliveries(received: ReceivedWebhook[], secret: string, acknowledged: Set<string>): Deliveries {
  const verifier = new Webhook(secret);
  const delivered = new Map<string, number>();
  const leads = new Set<string>();
  const invalid: string[] = [];
  const leadOf = new Map<string, string>();
  for (const request of received) {
    const id = String(request.headers['webhook-id']);
    let event: { type?: string; data?: { id?: string } };
    try {
      event = verifier.verify(request.body, request.headers as Record<string, string>) as typeof event;
    } catch (error) {
      invalid.push(`${id}: ${(error as Error).message}`);
      continue;
    }
    const leadId = event.data?.id;
    if (event.type !== 'lead.received' || typeof leadId !== 'string') {
      invalid.push(`${id}: not a lead.received event: ${request.body.slice(0, 100)}`);
      continue;
    }
    if ((leadOf.get(id) ?? leadId) !== leadId) invalid.push(`${id}: carried lead ${leadOf.get(id)} and then lead ${leadId}`);
    leadOf.set(id, leadId);
    if (request.status < 200 || request.status > 299) continue;
    delivered.set(id, (delivered.get(id) ?? 0) + 1);
    leads.add(leadId);
  }
  const duplicates = [...delivered].filter(([, count]) => count > 1).map(([id]) => id);
  return {
    delivered,
    requests: received.length,
    leads,
    duplicates,
    extraDeliveries: [...delivered.values()].reduce((sum, count) => sum + count - 1, 0),
    invalid,
    missing: [...acknowledged].filter((id) => !leads.has(id)),
    unacknowledged: [...leads].filter((id) => !acknowledged.has(id)).length,
  };
}

/**
 * Waits until health reports no webhook backlog and every acknowledged lead has reached the receiver; resolves with the
 * milliseconds it took, or undefined after `timeoutMs` (the scenario reports what it saw, then fails on what is missing).
 */
export async function drained(
  client: HttpClient,
  received: ReceivedWebhook[],
  secret: string,
  acknowledged: Set<string>,
  timeoutMs: number,
): Promise<number | undefined> {
  try {
    return await waitFor(
      'the webhook backlog drained and every acknowledged lead delivered',
      async () => (await pendingWebhooks(client)) === 0 && deliveries(received, secret, acknowledged).missing.length === 0,
      timeoutMs,
    );
  } catch {
    return undefined;
  }
}

/** "2.4 s", or what a drain that did not end came to. */
export function drainTime(ms: number | undefined, timeoutMs: number): string {
  return ms === undefined ? `NOT drained within ${timeoutMs / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** "12 requests for 10 messages (2 duplicates)". */
export function deliverySummary(result: Deliveries): string {
  return `${result.requests} requests to the receiver, ${result.delivered.size} messages answered 2xx, ${result.leads.size} leads; ${result.duplicates.length} messages delivered more than once (${result.extraDeliveries} extra deliveries); ${result.missing.length} acknowledged leads missing; ${result.invalid.length} invalid (signature or body)`;
}
