import { connect, type Socket } from 'node:net';
import { sleep } from './load.js';
import type { ProbedService } from './probed-service.js';

export interface UnreadAttack {
  sockets: number;
  requestsSent: number;
  beforeMb: number;
  peakMb: number;
  /** After the attackers went away and the service had a moment to collect. */
  afterMb: number;
  /** Attacking sockets the service closed itself (a write timeout) before the attack ended. */
  closedByService: number;
}

const MCP_READ = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'leads://openapi' } });
/** The two largest answers a caller can ask for without a token: the contract, by HTTP and by MCP. */
const REQUESTS = [
  'GET /docs/openapi-leads.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
  'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
    `MCP-Protocol-Version: 2025-11-25\r\nContent-Length: ${Buffer.byteLength(MCP_READ)}\r\n\r\n${MCP_READ}`,
];
/** Requests pipelined in one write, and how often a socket writes again while the attack lasts. */
const BURST = 16;
const BURST_EVERY_MS = 200;
/** The attacker's own buffer: a socket the service stopped reading is not written to (the attacker is bounded too). */
const ATTACKER_BUFFER_BYTES = 256 * 1024;

/**
 * `sockets` connections (half asking for the contract over HTTP, half over MCP) that pipeline requests in bursts and
 * never read an answer, for `durationMs`. The service's resident memory is sampled throughout. With `read`, the same
 * traffic from clients that read their answers: the control, whose growth is what serving that traffic costs at all.
 */
export async function unreadAnswers(service: ProbedService, port: number, sockets: number, durationMs: number, read = false): Promise<UnreadAttack> {
  const beforeMb = service.rssMb();
  let peakMb = beforeMb;
  let requestsSent = 0;
  let closedByService = 0;
  const open: Socket[] = [];
  const end = Date.now() + durationMs;
  for (let i = 0; i < sockets; i++) {
    const socket = connect({ port, host: '127.0.0.1' });
    if (read) socket.resume();
    else socket.pause(); // never read
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (Date.now() < end) closedByService++;
    });
    open.push(socket);
  }
  const burst = (socket: Socket, index: number) => {
    if (socket.destroyed || socket.writableLength > ATTACKER_BUFFER_BYTES) return;
    socket.write(REQUESTS[index % REQUESTS.length].repeat(BURST));
    requestsSent += BURST;
  };
  while (Date.now() < end) {
    open.forEach(burst);
    const next = Date.now() + BURST_EVERY_MS;
    while (Date.now() < next) {
      peakMb = Math.max(peakMb, service.rssMb());
      await sleep(50);
    }
  }
  peakMb = Math.max(peakMb, service.rssMb());
  for (const socket of open) socket.destroy();
  await sleep(2_000);
  return { sockets, requestsSent, beforeMb, peakMb, afterMb: service.rssMb(), closedByService };
}
