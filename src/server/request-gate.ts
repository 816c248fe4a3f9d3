import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Puts `gate` in front of the server's request listeners (the app), before Express sees the request: the gate answers
 * it itself, or hands it on with `next` (then or later).
 */
export function gateRequests(server: Server, gate: (req: IncomingMessage, res: ServerResponse, next: RequestListener) => void): void {
  const app = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  const next: RequestListener = (req, res) => {
    for (const listener of app) listener.call(server, req, res);
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => gate(req, res, next));
}
