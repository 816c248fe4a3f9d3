import { loadConfig } from '../config/config.js';
import { startLine, stopLine } from './lifecycle.js';

describe('the start line', () => {
  it('names the address, the SQLite file and that Redis is not used', () => {
    const line = startLine(loadConfig({ DATA_DIR: '/var/lib/leads' }, false), 3000);
    expect(line).toBe(
      `Leads API ${loadConfig({}, false).version} (Node.js ${process.version}) listening on http://localhost:3000; database: SQLite /var/lib/leads/leads.sqlite; Redis: not used, rate limits per instance`,
    );
  });

  it('names the port actually bound and a public URL that differs from it', () => {
    const line = startLine(loadConfig({ PORT: '0', PUBLIC_BASE_URL: 'https://api.example.com' }, false), 41234);
    expect(line).toContain('listening on http://localhost:41234 (public URL https://api.example.com);');
  });

  it('shows PostgreSQL and Redis by host, port and database, never their user, password or query', () => {
    const config = loadConfig(
      {
        DATABASE_URL: 'postgres://leads:Pg-Secret-1@db.internal:5433/leads_prod?sslmode=require&password=Pg-Secret-2',
        REDIS_URL: 'rediss://default:Redis-Secret-3@cache.internal:6380/2',
        REDIS_KEY_PREFIX: 'prod:',
      },
      false,
    );
    const line = startLine(config, 3000);
    expect(line).toContain('database: PostgreSQL db.internal:5433/leads_prod;');
    expect(line).toContain('Redis: cache.internal:6380/2, keys under "prod:"');
    for (const secret of ['Pg-Secret', 'Redis-Secret', 'leads:', 'default', 'sslmode']) expect(line).not.toContain(secret);
  });

  it('reads a URL without port or database as the client would: host only', () => {
    const line = startLine(loadConfig({ DATABASE_URL: 'postgresql://u:p@db', REDIS_URL: 'redis://cache' }, false), 3000);
    expect(line).toContain('database: PostgreSQL db;');
    expect(line).toContain('Redis: cache, keys under "leads:"');
  });
});

describe('the start line names where e-mail goes', () => {
  it('the SMTP server, as the Mailer names it (without credentials)', () => {
    expect(startLine(loadConfig({}, false), 3000, 'smtp://mail.empresa.example:587')).toMatch(/; mail: smtp:\/\/mail\.empresa\.example:587$/);
  });

  it('or the folder of .eml files, saying why', () => {
    expect(startLine(loadConfig({}, false), 3000, '/var/lib/leads/mail')).toMatch(/; mail: \.eml files in \/var\/lib\/leads\/mail \(SMTP_URL not set\)$/);
  });

  it('where metrics are served, and that traces are exported (never the collector address, which may carry a token)', () => {
    const config = loadConfig({ METRICS_PORT: '9464', OTEL_EXPORTER_OTLP_ENDPOINT: 'https://user:secret@collector.example' }, false);
    const line = startLine(config, 3000, undefined, { host: '127.0.0.1', port: 9464 });
    expect(line).toMatch(/; metrics: http:\/\/127\.0\.0\.1:9464\/metrics; traces: OTLP\/HTTP \(OTEL_EXPORTER_OTLP_ENDPOINT\)$/);
    expect(line).not.toContain('secret');
  });
});

describe('the stop line', () => {
  it('names the signal and how long the stop took', () => {
    expect(stopLine('SIGTERM', 41.6)).toBe('Stopped on SIGTERM in 42 ms: requests in flight answered, connections closed');
  });
});
