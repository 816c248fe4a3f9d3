import 'reflect-metadata';
import crypto from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, Repository } from 'typeorm';
import { dataSourceOptions, runMigrations } from '../database/data-source.js';
import { OperatorClient } from './operator-client.entity.js';
import { OperatorClientError, OperatorClients } from './operator-clients.service.js';

describe('OperatorClients', () => {
  let dir: string;
  let dataSource: DataSource;
  let rows: Repository<OperatorClient>;
  let clients: OperatorClients;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clients-'));
    dataSource = await new DataSource({ ...dataSourceOptions({ databaseUrl: undefined, dataDir: dir }), entities: [OperatorClient] }).initialize();
    await runMigrations(dataSource);
    rows = dataSource.getRepository(OperatorClient);
    clients = new OperatorClients(rows, { clientSecretGraceSeconds: 3600 });
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes an op_ id and a 256-bit base64url secret, and stores only the SHA-256 of the secret', async () => {
    const issued = await clients.create('  CRM sync ', 'leads:read leads:export leads:read');
    expect(issued).toEqual({
      client_id: expect.stringMatching(/^op_[\w-]{22}$/),
      client_secret: expect.stringMatching(/^[\w-]{43}$/),
      scope: 'leads:read leads:export',
    });
    expect(Buffer.from(issued.client_secret, 'base64url')).toHaveLength(32);
    const [row] = await rows.find();
    expect(row).toMatchObject({ clientId: issued.client_id, name: 'CRM sync', scopes: 'leads:read leads:export', previousSecretHash: null, revokedAt: null });
    expect(row.secretHash).toBe(crypto.createHash('sha256').update(issued.client_secret).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(issued.client_secret);
  });

  it.each([
    ['an agent-only or unknown scope', 'x', 'leads:read admin', /Unknown scope admin/],
    ['no scope', 'x', '  ', /at least one scope/],
    ['no name', ' ', 'leads:read', /needs a name/],
    ['a name over 200 characters', 'é'.repeat(201), 'leads:read', /longer than 200/],
    ['a control character in the name', 'CRM\u001b[2J', 'leads:read', /control/],
    ['a bidirectional override in the name', 'CRM\u202Emoc.live', 'leads:read', /bidirectional/],
  ])('refuses %s, storing nothing', async (_case, name, scope, message) => {
    await expect(clients.create(name, scope)).rejects.toThrow(OperatorClientError);
    await expect(clients.create(name, scope)).rejects.toThrow(message);
    expect(await rows.count()).toBe(0);
  });

  it('accepts the new secret at once and the previous one for the grace period only', async () => {
    const first = await clients.create('CRM', 'leads:read');
    const second = await clients.rotate(first.client_id);
    expect(second.client_secret).not.toBe(first.client_secret);
    expect(second.previousSecretExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 3590_000);
    expect(await clients.authenticate(first.client_id, second.client_secret)).toMatchObject({ clientId: first.client_id });
    expect(await clients.authenticate(first.client_id, first.client_secret)).toMatchObject({ clientId: first.client_id });
    jest.spyOn(Date, 'now').mockReturnValue(second.previousSecretExpiresAt!.getTime() + 1);
    expect(await clients.authenticate(first.client_id, first.client_secret)).toBeNull();
    expect(await clients.authenticate(first.client_id, second.client_secret)).not.toBeNull();
  });

  it('ends a secret still in its grace period when the client rotates again, and with a grace of 0 at once', async () => {
    const first = await clients.create('CRM', 'leads:read');
    const second = await clients.rotate(first.client_id);
    await clients.rotate(first.client_id);
    expect(await clients.authenticate(first.client_id, first.client_secret)).toBeNull();
    expect(await clients.authenticate(first.client_id, second.client_secret)).not.toBeNull();
    const immediate = new OperatorClients(rows, { clientSecretGraceSeconds: 0 });
    const fourth = await immediate.rotate(first.client_id);
    expect(fourth.previousSecretExpiresAt).toBeNull();
    expect(await clients.authenticate(first.client_id, second.client_secret)).toBeNull();
  });

  it('refuses every secret of a revoked client, and rotating it', async () => {
    const issued = await clients.create('CRM', 'leads:read');
    const rotated = await clients.rotate(issued.client_id);
    expect(await clients.revoke(issued.client_id)).toEqual({ revokedAt: expect.any(Date), already: false });
    expect(await clients.authenticate(issued.client_id, rotated.client_secret)).toBeNull();
    expect(await clients.authenticate(issued.client_id, issued.client_secret)).toBeNull();
    await expect(clients.rotate(issued.client_id)).rejects.toThrow(/revoked/);
    expect(await clients.revoke(issued.client_id)).toEqual({ revokedAt: expect.any(Date), already: true });
    await expect(clients.revoke('op_unknown')).rejects.toThrow('There is no client op_unknown.');
  });

  it('does the same hashing and constant-time comparisons whether the client is unknown, wrong, revoked or right', async () => {
    const live = await clients.create('live', 'leads:read');
    const revoked = await clients.create('revoked', 'leads:read');
    await clients.revoke(revoked.client_id);
    const compare = jest.spyOn(crypto, 'timingSafeEqual');
    const attempts: [string, string, boolean][] = [
      ['op_unknown', live.client_secret, false],
      [live.client_id, 'wrong', false],
      [revoked.client_id, revoked.client_secret, false],
      ['x'.repeat(65), live.client_secret, false],
      [live.client_id, live.client_secret, true],
    ];
    for (const [clientId, secret, accepted] of attempts) {
      compare.mockClear();
      expect(Boolean(await clients.authenticate(clientId, secret))).toBe(accepted);
      expect(compare.mock.calls.map(([a, b]) => [(a as Buffer).length, (b as Buffer).length])).toEqual([
        [32, 32],
        [32, 32],
      ]);
    }
  });
});
