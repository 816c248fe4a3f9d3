import { connect } from 'node:net';

export interface SlowSocket {
  from: string;
  /** Still open when the flood ended: the service took it in. */
  held: boolean;
  /** Milliseconds from connecting until the service closed it (refused), when it did. */
  closedAfterMs?: number;
  /** The status it answered before closing, 0 for none. */
  status: number;
}

/**
 * Slow-header sockets from each of `addresses` (`perAddress` from each), all opened at once, each sending a request
 * line and then one header byte a second, never ending its headers; after `holdMs` the ones still open are closed.
 * Short of the headers timeout, a socket the service closed is one it refused.
 */
export function slowHeaderFlood(port: number, addresses: string[], perAddress: number, holdMs: number): Promise<SlowSocket[]> {
  return Promise.all(
    addresses.flatMap((from) =>
      Array.from(
        { length: perAddress },
        () =>
          new Promise<SlowSocket>((resolve) => {
            const started = Date.now();
            const socket = connect({ port, host: '127.0.0.1', localAddress: from });
            let answer = '';
            let held = false;
            const ticker = setInterval(() => socket.write('a'), 1_000);
            const hold = setTimeout(() => {
              held = true;
              socket.destroy();
            }, holdMs);
            socket.on('data', (chunk) => (answer += chunk));
            socket.on('error', () => undefined); // a reset is a refusal; 'close' follows
            socket.on('close', () => {
              clearInterval(ticker);
              clearTimeout(hold);
              const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
              resolve(held ? { from, held, status } : { from, held, closedAfterMs: Date.now() - started, status });
            });
            socket.write('GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
          }),
      ),
    ),
  );
}
