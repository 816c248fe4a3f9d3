import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Express, Request, Response } from 'express';
import { PrototypedExpressAdapter } from './express-adapter.js';

describe('PrototypedExpressAdapter', () => {
  let server: Server;
  let app: Express;
  const seen: { before: object | null; after: object | null; resBefore: object | null }[] = [];

  beforeAll(async () => {
    const adapter = new PrototypedExpressAdapter();
    adapter.initHttpServer({});
    app = adapter.getInstance<Express>();
    server = adapter.getHttpServer() as Server;
    // Runs before Express's own listener: what the server built, before Express touches it.
    server.prependListener('request', (req, res) => seen.push({ before: Object.getPrototypeOf(req), after: null, resBefore: Object.getPrototypeOf(res) }));
    app.get('/echo', (req: Request, res: Response) => {
      seen.at(-1)!.after = Object.getPrototypeOf(req);
      res.status(200).json({ header: req.get('x-probe'), path: req.path, query: req.query });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('builds requests and responses on the prototypes Express uses, so Express never has to change them', async () => {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/echo?a=1`, { headers: { 'X-Probe': 'yes' } });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ header: 'yes', path: '/echo', query: { a: '1' } });
    expect(seen).toHaveLength(1);
    expect(seen[0].before).toBe(app.request);
    expect(seen[0].after).toBe(app.request);
    expect(seen[0].resBefore).toBe(app.response);
  });
});
