import { once } from 'node:events';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { operatorToken } from './operator-token.js';
import type { TestApp } from './test-app.js';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** The status the receiver chose to answer (the sender may not have read it: it may have died first). */
  status: number;
}

/** What the receiver answers a request: a status, headers, and a body; or a delay before it. */
export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
}

/**
 * A webhook receiver on 127.0.0.1 for tests: it records every request and answers from a queue of planned answers,
 * then with `fallback` (200 by default).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  readonly planned: ReceiverAnswer[] = [];
  fallback: ReceiverAnswer = { status: 200 };
  private server!: Server;
  private waiters: (() => void)[] = [];

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    receiver.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const answer = receiver.planned.shift() ?? receiver.fallback;
        receiver.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(), status: answer.status });
        for (const waiter of receiver.waiters.splice(0)) waiter();
        setTimeout(() => {
          res.writeHead(answer.status, answer.headers ?? {});
          res.end(answer.body ?? '');
        }, answer.delayMs ?? 0);
      });
    });
    receiver.server.keepAliveTimeout = 1000;
    receiver.server.listen(0, '127.0.0.1');
    await once(receiver.server, 'listening');
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Resolves once `count` requests have arrived in all (fails after `timeoutMs`). */
  async waitFor(count: number, timeoutMs = 10_000): Promise<ReceivedWebhook[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} webhook requests, got ${this.received.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.received;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }
}

/**
 * Waits until health reports no webhook backlog (the worker has fanned out the messages of leads stored by earlier
 * tests), so that two health reports taken one after the other agree.
 */
export async function settledWebhooks(get: () => Promise<{ body: { webhooks: { pending: number } | null } }>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await get()).body.webhooks?.pending !== 0) {
    if (Date.now() > deadline) throw new Error('the webhook backlog did not drain');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A receiver subscribed to the service under test by an endpoint made through the API, as an operator makes one. */
export async function subscribedReceiver(t: TestApp): Promise<WebhookReceiver> {
  const receiver = await WebhookReceiver.start();
  const manager = await operatorToken(t, 'webhooks:manage');
  const res = await t.http.post('/api/v1/webhooks').set('Authorization', `Bearer ${manager}`).send({ url: receiver.url });
  if (res.status !== 201) throw new Error(`the webhook endpoint was not created: ${res.status} ${res.text}`);
  return receiver;
}
