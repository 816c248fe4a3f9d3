import { once } from 'node:events';
import { createServer, connect, Server, Socket } from 'node:net';

/** A loopback TCP proxy that a test can cut and restore, to take a dependency away without touching the real server. */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private partitioned = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Listens on a free port the first time, and on the same port again after stop(): the dependency comes back where it was. */
  async start(): Promise<void> {
    this.partitioned = false;
    this.server = createServer((client) => {
      this.track(client);
      if (this.partitioned) return; // accepted, and never answered
      const upstream = this.track(connect(this.targetPort, this.targetHost));
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as { port: number }).port;
  }

  /** Refuses new connections and cuts the open ones, as if the server had gone away. */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /**
   * Lets nothing through any more, either way, yet closes nothing and still accepts connections: a dependency gone
   * silent (a network partition, a hung server) rather than away. stop() and start() end it.
   */
  partition(): void {
    this.partitioned = true;
    for (const socket of this.sockets) {
      socket.unpipe();
      socket.pause();
    }
  }

  private track(socket: Socket): Socket {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    return socket;
  }
}
