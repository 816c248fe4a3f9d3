import { createServer } from 'node:net';

/** A loopback port that nothing listens on right now (for the build's training start, the benchmarks and the tests). */
export function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}
