import type { Server } from 'node:http';
import { contractSchema } from './contract.js';
import { connect, type AddressInfo } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `request` byte for byte to a listening server (in this process, or a port on loopback) and reads until it
 * closes the connection: for what Node answers before the app (oversized headers, broken framing, timeouts), which an
 * HTTP client library would refuse to send. Status 0: closed without an answer. Fails after `idleMs` of silence.
 */
export function rawRequest(server: Server | number, request: string, idleMs = 10_000): Promise<RawResponse> {
  const port = typeof server === 'number' ? server : (server.address() as AddressInfo).port;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(idleMs, () => socket.destroy(new Error(`no answer within ${idleMs / 1000} s`)));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(request);
  });
}

/** A problem written before routing (app.setup.ts), checked against the contract's Problem schema directly. */
export function expectRawProblem(res: RawResponse, status: number, code: string, leaks: RegExp): void {
  expect(res.status).toBe(status);
  // Written without "; charset=utf-8" by Node's clientError path, with it by strict-requests; either is UTF-8 JSON.
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json(; charset=utf-8)?$/);
  const body = JSON.parse(res.body);
  const validate = contractSchema('/components/schemas/Problem');
  expect(validate(body) ? [] : validate.errors).toEqual([]);
  expect(body).toMatchObject({ status, code, type: `http://leads.test/docs/errors#${code}` });
  expect(body.request_id).toBe(res.headers['x-request-id']);
  expect(res.body).not.toMatch(leaks);
}
