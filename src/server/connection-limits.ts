import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import { clientAddressKey } from '../request/client-ip.js';
import { gateRequests, type RequestListener } from './request-gate.js';

export interface ConnectionLimits {
  /** Concurrent connections in total; 0: no cap. */
  maxConnections: number;
  /** Concurrent connections per socket address; 0: no cap. Not applied to sockets from a trusted proxy. */
  maxPerAddress: number;
  /** How long a socket may hold response bytes its client does not read. */
  writeTimeoutMs: number;
  /** IPv6 sockets are counted by this prefix, as rate limits are: one subscriber holds a whole /64. */
  ipv6PrefixLength: number;
  /** Express's compiled TRUST_PROXY: a socket from a trusted proxy carries many clients, so it has no per-address cap. */
  isTrustedProxy: (address: string, hop: number) => boolean;
}

const REFUSAL_LOG_INTERVAL_MS = 10_000;
/** Pipelined requests that may wait on one connection behind the answer being written; a client sending more is closed. */
export const MAX_PIPELINED_REQUESTS = 16;
const SWEEP_INTERVAL_MS = 1_000;

/**
 * Caps connections so that a flood of sockets (slow-loris, idle) cannot take every file descriptor: beyond a cap a
 * new socket is closed before any byte of it is parsed, and the connections already open are served as usual.
 * Also closes sockets whose client stops reading its answers (see sweep), so unread answers cannot grow the heap.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): void {
  const logger = new Logger('Connections');
  const perAddress = new Map<string, number>();
  const open = new Set<Socket>();
  /** Sockets seen holding unread response bytes: since when, and how many at the last look. */
  const stalled = new Map<Socket, { since: number; pending: number }>();
  let refused = 0;
  let lastLog = 0;
  const countRefusal = () => {
    refused++;
    const now = Date.now();
    if (now - lastLog < REFUSAL_LOG_INTERVAL_MS) return;
    // One line per interval at most: a flood must not become a log flood.
    logger.warn({ refusedSinceLastLine: refused, open: open.size }, 'connections refused: connection cap reached');
    lastLog = now;
    refused = 0;
  };

  // Node closes the handle itself, before a Socket is even made; 'drop' only tells.
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;
  server.on('drop', countRefusal);

  // Node's HTTP parser is attached by its own 'connection' listener: run it only for admitted sockets.
  const parse = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const remote = socket.remoteAddress;
    if (!remote) {
      socket.destroy();
      return;
    }
    const counted = limits.maxPerAddress > 0 && !limits.isTrustedProxy(remote, 0);
    const address = counted ? (clientAddressKey(remote, limits.ipv6PrefixLength) ?? remote) : remote;
    if (counted) {
      const count = perAddress.get(address) ?? 0;
      if (count >= limits.maxPerAddress) {
        socket.destroy();
        countRefusal();
        return;
      }
      perAddress.set(address, count + 1);
    }
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      stalled.delete(socket);
      if (!counted) return;
      const count = perAddress.get(address)! - 1;
      if (count) perAddress.set(address, count);
      else perAddress.delete(address);
    });
    for (const listener of parse) listener.call(server, socket);
  });

  /**
   * Write timeout: a socket whose response bytes have waited unread for writeTimeoutMs, without the client draining
   * them, is destroyed (and what it held freed). Node checks its own request timeouts the same way, by a sweep, so
   * that no request pays for a timer; an idle socket (nothing to write) is never touched here.
   */
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const socket of open) {
      const pending = socket.writableLength;
      const seen = stalled.get(socket);
      if (pending === 0) {
        if (seen) stalled.delete(socket);
      } else if (!seen || pending < seen.pending) {
        // Bytes left since the last look: the client reads, however slowly.
        stalled.set(socket, { since: now, pending });
      } else if (now - seen.since >= limits.writeTimeoutMs) {
        socket.destroy();
      } else {
        seen.pending = pending;
      }
    }
  }, SWEEP_INTERVAL_MS).unref();
  server.once('close', () => clearInterval(sweep));
  serveInTurn(server);
}

type Exchange = [IncomingMessage, ServerResponse];

/**
 * Pipelined requests are handed to the app one at a time, each once the answer before it has reached the kernel
 * (the response's 'close'). Node parses every request of a burst at once and would build all their answers in memory
 * behind an unread one (60 sockets pipelining the contract took the heap to 500 MB). While requests wait, the socket
 * is not read, so only what one read brought in is parsed; a connection with more than MAX_PIPELINED_REQUESTS waiting
 * is closed.
 */
function serveInTurn(server: Server): void {
  /** Per connection with an answer in progress: the requests waiting behind it. */
  const waiting = new WeakMap<Socket, Exchange[]>();
  /** Connections not read while requests wait on them (Node pauses sockets for its own reasons too: not these). */
  const paused = new WeakSet<Socket>();
  const serve = (req: IncomingMessage, res: ServerResponse, next: RequestListener) => {
    const socket = req.socket;
    waiting.set(socket, waiting.get(socket) ?? []);
    res.once('close', () => {
      // Answered before its body was read (a CORS preflight, a 404, a 405): Node would read the rest, however large,
      // to keep the connection; close it instead.
      if (!req.complete) socket.destroy();
      // A closed connection answers nothing more: what waited on it is dropped, not run.
      const following = socket.destroyed ? undefined : waiting.get(socket)?.shift();
      // Read again: the next request's body may still be on its way.
      if (paused.delete(socket) && !socket.destroyed) socket.resume();
      if (following) serve(...following, next);
      else waiting.delete(socket);
    });
    next(req, res);
  };
  gateRequests(server, (req, res, next) => {
    const queue = waiting.get(req.socket);
    if (!queue) return serve(req, res, next);
    // Read no more from a client that is ahead of its answers: what it sends next waits in the kernel, not the heap.
    if (!paused.has(req.socket)) paused.add(req.socket.pause());
    if (queue.push([req, res]) > MAX_PIPELINED_REQUESTS) req.socket.destroy();
  });
}
