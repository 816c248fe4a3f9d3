import type { Server } from 'node:http';
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
