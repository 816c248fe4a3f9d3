/** @system `npm run clients:create` and the built service as processes */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { clientsCommand, lastJsonLine } from './support/operator-clients.js';
import { GENEROUS_LIMITS, startServer } from './support/server-process.js';
import { freshDatabase } from './support/test-app.js';

/**
 * The operator-clients commands as an operator meets them: `npm run clients:create` as its own process (the one spawn
 * of a `clients:*` command; operator-clients.e2e-spec.ts runs every command in process), and a running service whose
 * logs never show a client secret.
 */

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('operator clients: npm run clients:create', () => {
  it('runs through npm (the pre hook checks the build, then the command): the credentials as the last line, the secret stored as its SHA-256', async () => {
    const database = await freshDatabase();
    try {
      const child = spawn('npm', ['run', 'clients:create', '--', '--name', 'Marketing CRM', '--scope', 'leads:read leads:export'], {
        env: { PATH: process.env.PATH!, ...database.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const status = await new Promise((resolve, reject) => child.on('error', reject).on('close', resolve));
      expect([status, stderr]).toEqual([0, expect.stringContaining('Created operator client op_')]);
      const last = lastJsonLine(stdout)!;
      expect(Object.keys(last)).toEqual(['client_id', 'client_secret', 'scope']);
      expect(last).toEqual({
        client_id: expect.stringMatching(/^op_[\w-]{22}$/),
        client_secret: expect.stringMatching(/^[\w-]{43}$/),
        scope: 'leads:read leads:export',
      });
      expect(stderr).not.toContain(last.client_secret);
      const rows = await database.query<{ client_id: string; secret_hash: string }>('SELECT client_id, secret_hash FROM operator_clients');
      expect(rows).toEqual([{ client_id: last.client_id, secret_hash: createHash('sha256').update(last.client_secret).digest('hex') }]);
    } finally {
      await database.drop();
    }
  });
});

describe('operator clients: logs', () => {
  it('never writes a client secret, in the body or in Basic, to the logs of the running service', async () => {
    const database = await freshDatabase();
    const made = await clientsCommand(['create', '--name', 'logged?', '--scope', 'leads:read'], database.env);
    const { client_id: clientId, client_secret: secret } = made.last!;
    expect(secret).toMatch(/^[\w-]{43}$/);
    const basicHeader = basic(clientId, secret);
    const server = await startServer({ ...GENEROUS_LIMITS, ...database.env, LOG_LEVEL: 'debug' });
    try {
      const form = (body: Record<string, string>) => new URLSearchParams({ grant_type: 'client_credentials', ...body }).toString();
      const post = (body: string, headers: Record<string, string> = {}) =>
        fetch(`${server.baseUrl}/oauth2/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body });
      expect((await post(form({ client_id: clientId, client_secret: secret }))).status).toBe(200);
      expect((await post(form({}), { Authorization: basicHeader })).status).toBe(200);
      expect((await post(form({ client_id: clientId, client_secret: `${secret}-wrong` }))).status).toBe(401);
      expect((await post(form({ client_secret: secret }), { Authorization: basicHeader })).status).toBe(400);
    } finally {
      await server.stop();
      await database.drop();
    }
    const logs = server.output();
    expect(logs).toContain('"statusCode":200');
    expect(logs).toContain('"statusCode":401');
    for (const leaked of [secret, basicHeader.slice('Basic '.length)]) expect(logs).not.toContain(leaked);
  });
});
