import { connect } from 'node:net';
import { rawRequest } from '../../support/raw-http.js';

export interface Cut {
  /** Milliseconds from the first byte sent until the server closed the connection; undefined when it never did. */
  closedAfterMs?: number;
  /** The status the server answered before closing; 0 when it closed without an answer. */
  status: number;
}

/**
 * A slow-loris: `count` connections that each send a request line, then one header byte every `intervalMs`, never
 * ending the headers. Resolves once the server has closed every one of them, or at `giveUpMs` (closing the rest).
 */
export function slowLoris(port: number, count: number, { intervalMs, giveUpMs }: { intervalMs: number; giveUpMs: number }): Promise<Cut[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Cut>((resolve) => {
          const started = Date.now();
          const socket = connect(port, '127.0.0.1');
          let answer = '';
          let closedByServer = true;
          // Staggered, so the bytes arrive as a trickle rather than in bursts.
          const trickle = setTimeout(() => {
            const ticker = setInterval(() => socket.write('a'), intervalMs);
            socket.once('close', () => clearInterval(ticker));
          }, Math.random() * intervalMs);
          const giveUp = setTimeout(() => {
            closedByServer = false;
            socket.destroy();
          }, giveUpMs);
          socket.on('data', (chunk) => (answer += chunk));
          socket.on('error', () => undefined); // a reset is one way of being cut; 'close' follows
          socket.on('close', () => {
            clearTimeout(trickle);
            clearTimeout(giveUp);
            resolve({ closedAfterMs: closedByServer ? Date.now() - started : undefined, status: statusOf(answer) });
          });
          socket.write('GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
        }),
    ),
  );
}

/** Sends `request` (possibly unfinished) and waits up to `giveUpMs` for the server to close the connection. */
export async function untilClosed(port: number, request: string, giveUpMs: number): Promise<Cut> {
  const started = Date.now();
  try {
    const { status } = await rawRequest(port, request, giveUpMs);
    return { closedAfterMs: Date.now() - started, status };
  } catch {
    return { status: 0 };
  }
}

function statusOf(answer: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
}
