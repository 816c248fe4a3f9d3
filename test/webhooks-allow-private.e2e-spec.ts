import { startTestApp } from './support/test-app.js';

/** What a start writes at warn and above, read from standard output (LOG_FORMAT=pretty writes through process.stdout). */
async function startOutput(env: Record<string, string>): Promise<string> {
  let output = '';
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    output += String(chunk);
    return true;
  });
  try {
    const app = await startTestApp({ LOG_LEVEL: 'warn', LOG_FORMAT: 'pretty', ...env });
    await app.close();
  } finally {
    write.mockRestore();
  }
  return output;
}

describe('WEBHOOKS_ALLOW_PRIVATE (the webhooks SSRF guard off)', () => {
  it('is said at every start, at warn, naming the variable', async () => {
    const output = await startOutput({ WEBHOOKS_ALLOW_PRIVATE: 'true' });
    const lines = output.split('\n').filter((line) => line.includes('WEBHOOKS_ALLOW_PRIVATE'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/WARN/);
    expect(lines[0]).toContain('private and loopback addresses');
  });

  it('is said in production too when WEBHOOKS_ALLOW_PRIVATE_IN_PRODUCTION=true accepts it', async () => {
    const output = await startOutput({ WEBHOOKS_ALLOW_PRIVATE: 'true', NODE_ENV: 'production', WEBHOOKS_ALLOW_PRIVATE_IN_PRODUCTION: 'true' });
    expect(output).toMatch(/WARN.*WEBHOOKS_ALLOW_PRIVATE=true/);
  });

  it('is not said when the guard is on', async () => {
    expect(await startOutput({})).not.toContain('WEBHOOKS_ALLOW_PRIVATE');
  });
});
