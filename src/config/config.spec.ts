import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { ROLES } from '../people/roles.js';
import { ConfigError, INBOX_ROLES, loadConfig, SCREENING_RULE_NAMES } from './config.js';

type Env = Record<string, string | undefined>;

/** The ConfigError that loading `env` throws; fails the test when it loads, or throws anything else. */
function failure(env: Env): ConfigError {
  let thrown: unknown;
  try {
    loadConfig(env);
  } catch (error) {
    thrown = error;
  }
  if (thrown === undefined) throw new Error(`loadConfig(${JSON.stringify(env)}) did not throw`);
  expect(thrown).toBeInstanceOf(ConfigError);
  return thrown as ConfigError;
}

/** Asserts that `value` for `variable` is refused with a message that names the variable. */
function expectRefused(variable: string, value: string, extra: Env = {}): ConfigError {
  const error = failure({ ...extra, [variable]: value });
  expect(error.name).toBe('ConfigError');
  expect(error.message).toMatch(new RegExp(`\\b${variable}\\b`));
  return error;
}

describe('loadConfig', () => {
  describe('defaults', () => {
    it('runs embedded with no environment at all', () => {
      expect(loadConfig({}, false)).toEqual({
        port: 3000,
        publicBaseUrl: 'http://localhost:3000',
        dataDir: resolve('./data'),
        databaseUrl: undefined,
        redisUrl: undefined,
        redisKeyPrefix: 'leads:',
        logLevel: 'info',
        logFormat: 'json',
        corsOrigins: '*',
        trustProxy: false,
        keepAliveTimeoutSeconds: 5,
        maxConnections: 4096,
        maxConnectionsPerAddress: 256,
        maxHeaders: 100,
        writeTimeoutSeconds: 30,
        ipv6PrefixLength: 64,
        rateLimitAnonymous: { limit: 60, windowSeconds: 60 },
        rateLimitAgent: { limit: 600, windowSeconds: 60 },
        rateLimitAgentPerAddress: { limit: 600, windowSeconds: 60 },
        rateLimitOperator: { limit: 6000, windowSeconds: 60 },
        rateLimitRegistration: { limit: 20, windowSeconds: 3600 },
        rateLimitToken: { limit: 60, windowSeconds: 60 },
        rateLimitVerifiedAgent: { limit: 6000, windowSeconds: 60 },
        rateLimitMcpHousekeeping: { limit: 600, windowSeconds: 60 },
        maxAnswerBytes: 1048576,
        clientSecretGraceSeconds: 86400,
        agentRefreshTokenTtlMs: 30 * 86_400_000,
        agentRefreshGraceMs: 30_000,
        exportMaxConcurrent: 2,
        exportPageSize: 500,
        inbox: { idleTimeoutMs: 8 * 3_600_000, sessionLifetimeMs: 7 * 86_400_000, verificationMailDailyLimit: 500 },
        apiDeprecations: [],
        timeZone: 'America/Sao_Paulo',
        leadRetentionDays: null,
        spamRetentionDays: 30,
        captcha: null,
        rateLimitFormToken: { limit: 60, windowSeconds: 60 },
        screeningRules: new Set(SCREENING_RULE_NAMES),
        screeningAllowDomains: new Set(),
        mail: {
          smtpUrl: null,
          smtpUser: null,
          smtpPassword: null,
          requireTls: false,
          from: 'leads@localhost.localdomain',
          fromAddress: 'leads@localhost.localdomain',
          fromName: null,
          unsubscribeMailto: null,
          dkim: null,
          retrySchedule: [5000, 20_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000],
          production: false,
        },
        notifyDigestAt: { hour: 8, minute: 0 },
        observability: { metrics: null, outboxDegradedAfterMs: 900_000, tracing: null },
        oidc: null,
        secretsKey: undefined,
        webhooks: {
          retrySchedule: [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
          timeoutMs: 15_000,
          disableAfterMs: 5 * 86_400_000,
          retentionMs: 30 * 86_400_000,
          allowPrivate: false,
          worker: true,
          concurrency: 64,
          endpointConcurrency: 16,
          pollIntervalMs: 1000,
          maxEndpoints: 50,
        },
        version: (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version,
      });
    });

    it('treats empty and whitespace-only values as unset', () => {
      const blank = Object.fromEntries(
        [
          'PORT',
          'PUBLIC_BASE_URL',
          'DATA_DIR',
          'DATABASE_URL',
          'REDIS_URL',
          'REDIS_KEY_PREFIX',
          'LOG_LEVEL',
          'LOG_FORMAT',
          'CORS_ORIGINS',
          'TRUST_PROXY',
          'KEEP_ALIVE_TIMEOUT',
          'RATE_LIMIT_ANONYMOUS',
          'RATE_LIMIT_AGENT',
          'RATE_LIMIT_REGISTRATION',
          'RATE_LIMIT_TOKEN',
          'API_DEPRECATIONS',
          'MAX_CONNECTIONS',
          'MAX_CONNECTIONS_PER_ADDRESS',
          'MAX_HEADERS',
          'WRITE_TIMEOUT',
          'IPV6_PREFIX_LENGTH',
          'RATE_LIMIT_MCP_HOUSEKEEPING',
          'MAX_ANSWER_BYTES',
          'RATE_LIMIT_AGENT_PER_ADDRESS',
          'RATE_LIMIT_OPERATOR',
          'CLIENT_SECRET_GRACE',
          'AGENT_REFRESH_TOKEN_TTL',
          'AGENT_REFRESH_GRACE',
          'EXPORT_MAX_CONCURRENT',
          'EXPORT_PAGE_SIZE',
          'LEAD_RETENTION_DAYS',
          'SPAM_RETENTION_DAYS',
          'RATE_LIMIT_FORM_TOKEN',
          'CAPTCHA_PROVIDER',
          'SECRETS_KEY',
        ].map((name, i) => [name, i % 2 ? '' : '  \t']),
      );
      expect(loadConfig(blank)).toEqual(loadConfig({}));
    });

    it('returns a frozen object', () => {
      expect(Object.isFrozen(loadConfig({}))).toBe(true);
    });

    it('writes coloured lines for a person at a terminal, JSON otherwise and always in production', () => {
      expect(loadConfig({}, true).logFormat).toBe('pretty');
      expect(loadConfig({}, false).logFormat).toBe('json');
      expect(loadConfig({ NODE_ENV: 'production' }, true).logFormat).toBe('json');
      expect(loadConfig({ LOG_FORMAT: 'JSON' }, true).logFormat).toBe('json');
      expect(loadConfig({ LOG_FORMAT: 'pretty' }, false).logFormat).toBe('pretty');
    });

    it('derives the default base URL from PORT', () => {
      expect(loadConfig({ PORT: '8080' }).publicBaseUrl).toBe('http://localhost:8080');
      expect(loadConfig({ PORT: '0' })).toMatchObject({ port: 0, publicBaseUrl: 'http://localhost:3000' });
    });
  });

  describe('accepted values', () => {
    it.each([
      [{ PORT: ' 8080 ' }, { port: 8080 }],
      [{ PORT: '65535' }, { port: 65535 }],
      [{ PUBLIC_BASE_URL: 'https://api.example.com' }, { publicBaseUrl: 'https://api.example.com' }],
      [{ PUBLIC_BASE_URL: 'http://localhost:8080' }, { publicBaseUrl: 'http://localhost:8080' }],
      [{ PUBLIC_BASE_URL: 'http://[::1]:3000' }, { publicBaseUrl: 'http://[::1]:3000' }],
      [{ DATA_DIR: '/var/lib/leads' }, { dataDir: '/var/lib/leads' }],
      [{ DATABASE_URL: 'postgres://leads:secret@db:5432/leads' }, { databaseUrl: 'postgres://leads:secret@db:5432/leads' }],
      [{ DATABASE_URL: 'postgresql://db/leads?sslmode=require' }, { databaseUrl: 'postgresql://db/leads?sslmode=require' }],
      [{ REDIS_URL: 'redis://cache:6379' }, { redisUrl: 'redis://cache:6379' }],
      [{ REDIS_URL: 'rediss://:secret@cache:6380/0' }, { redisUrl: 'rediss://:secret@cache:6380/0' }],
      [{ LOG_LEVEL: 'DEBUG' }, { logLevel: 'debug' }],
      [{ LOG_LEVEL: 'silent' }, { logLevel: 'silent' }],
      [{ REDIS_KEY_PREFIX: 'staging:' }, { redisKeyPrefix: 'staging:' }],
      [{ REDIS_KEY_PREFIX: '{eu-west}:leads:' }, { redisKeyPrefix: '{eu-west}:leads:' }],
      [{ REDIS_KEY_PREFIX: `${'x'.repeat(63)}:` }, { redisKeyPrefix: `${'x'.repeat(63)}:` }],
      [{ CORS_ORIGINS: '*' }, { corsOrigins: '*' }],
      [{ CORS_ORIGINS: 'https://a.example, http://localhost:5173' }, { corsOrigins: ['https://a.example', 'http://localhost:5173'] }],
      [{ TRUST_PROXY: '0' }, { trustProxy: 0 }],
      [{ TRUST_PROXY: '2' }, { trustProxy: 2 }],
      [{ TRUST_PROXY: 'loopback, 10.0.0.0/8, fd00::/8' }, { trustProxy: ['loopback', '10.0.0.0/8', 'fd00::/8'] }],
      [{ KEEP_ALIVE_TIMEOUT: '65' }, { keepAliveTimeoutSeconds: 65 }],
      [
        { MAX_CONNECTIONS: '0', MAX_CONNECTIONS_PER_ADDRESS: '0' },
        { maxConnections: 0, maxConnectionsPerAddress: 0 },
      ],
      [
        { MAX_CONNECTIONS: '20000', MAX_CONNECTIONS_PER_ADDRESS: '64' },
        { maxConnections: 20000, maxConnectionsPerAddress: 64 },
      ],
      [{ MAX_HEADERS: '10' }, { maxHeaders: 10 }],
      [{ WRITE_TIMEOUT: '1' }, { writeTimeoutSeconds: 1 }],
      [{ IPV6_PREFIX_LENGTH: '128' }, { ipv6PrefixLength: 128 }],
      [{ IPV6_PREFIX_LENGTH: '48' }, { ipv6PrefixLength: 48 }],
      [{ RATE_LIMIT_ANONYMOUS: '100/30s', RATE_LIMIT_AGENT: '1000/30s' }, { rateLimitAnonymous: { limit: 100, windowSeconds: 30 } }],
      [{ RATE_LIMIT_AGENT: '36000/3600s' }, { rateLimitAgent: { limit: 36000, windowSeconds: 3600 } }],
      [{ RATE_LIMIT_REGISTRATION: '5/60s' }, { rateLimitRegistration: { limit: 5, windowSeconds: 60 } }],
      [{ RATE_LIMIT_TOKEN: '100/10s' }, { rateLimitToken: { limit: 100, windowSeconds: 10 } }],
      [{ RATE_LIMIT_MCP_HOUSEKEEPING: '50/10s' }, { rateLimitMcpHousekeeping: { limit: 50, windowSeconds: 10 } }],
      [{ RATE_LIMIT_OPERATOR: '100/1s' }, { rateLimitOperator: { limit: 100, windowSeconds: 1 } }],
      [{ CLIENT_SECRET_GRACE: '0' }, { clientSecretGraceSeconds: 0 }],
      [{ CLIENT_SECRET_GRACE: '3600' }, { clientSecretGraceSeconds: 3600 }],
      [{ AGENT_REFRESH_TOKEN_TTL: '7d' }, { agentRefreshTokenTtlMs: 7 * 86_400_000 }],
      [{ AGENT_REFRESH_GRACE: '0s' }, { agentRefreshGraceMs: 0 }],
      [{ MAX_ANSWER_BYTES: '65536' }, { maxAnswerBytes: 65536 }],
      [{ MAX_ANSWER_BYTES: '1073741824' }, { maxAnswerBytes: 1073741824 }],
      [
        { EXPORT_MAX_CONCURRENT: '1', EXPORT_PAGE_SIZE: '10000' },
        { exportMaxConcurrent: 1, exportPageSize: 10000 },
      ],
      [
        { EXPORT_MAX_CONCURRENT: '64', EXPORT_PAGE_SIZE: '1' },
        { exportMaxConcurrent: 64, exportPageSize: 1 },
      ],
      [{}, { leadRetentionDays: null }],
      [{ LEAD_RETENTION_DAYS: '1' }, { leadRetentionDays: 1 }],
      [{ LEAD_RETENTION_DAYS: '730' }, { leadRetentionDays: 730 }],
      [{}, { spamRetentionDays: 30, captcha: null, rateLimitFormToken: { limit: 60, windowSeconds: 60 } }],
      [
        { SPAM_RETENTION_DAYS: '7', RATE_LIMIT_FORM_TOKEN: '10/60s' },
        { spamRetentionDays: 7, rateLimitFormToken: { limit: 10, windowSeconds: 60 } },
      ],
      [
        { CAPTCHA_PROVIDER: 'turnstile', CAPTCHA_SECRET: ' s3cret ', CAPTCHA_SITE_KEY: 'site' },
        {
          captcha: {
            provider: 'turnstile',
            secret: 's3cret',
            siteKey: 'site',
            verifyUrl: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
            scriptUrl: 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit',
          },
        },
      ],
      [
        {
          CAPTCHA_PROVIDER: 'hcaptcha',
          CAPTCHA_SECRET: 's',
          CAPTCHA_SITE_KEY: 'k',
          CAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/siteverify',
          CAPTCHA_SCRIPT_URL: 'http://127.0.0.1:9/api.js',
        },
        { captcha: { provider: 'hcaptcha', secret: 's', siteKey: 'k', verifyUrl: 'http://127.0.0.1:9/siteverify', scriptUrl: 'http://127.0.0.1:9/api.js' } },
      ],
    ] as [Env, object][])('%j', (env, expected) => {
      expect(loadConfig(env)).toMatchObject(expected);
    });

    it('runs every screening rule unless SCREENING_RULES names some, and exempts no domain unless SCREENING_ALLOW_DOMAINS lists it', () => {
      const defaults = loadConfig({});
      expect([...defaults.screeningRules]).toEqual([...SCREENING_RULE_NAMES]);
      expect([...defaults.screeningAllowDomains]).toEqual([]);
      expect([...loadConfig({ SCREENING_RULES: 'all' }).screeningRules]).toEqual([...SCREENING_RULE_NAMES]);
      expect([...loadConfig({ SCREENING_RULES: 'none' }).screeningRules]).toEqual([]);
      expect([...loadConfig({ SCREENING_RULES: ' honeypot , captcha' }).screeningRules]).toEqual(['honeypot', 'captcha']);
      expect([...loadConfig({ SCREENING_ALLOW_DOMAINS: 'Mailinator.com, empresa.com.br' }).screeningAllowDomains]).toEqual([
        'mailinator.com',
        'empresa.com.br',
      ]);
    });

    it('parses API_DEPRECATIONS into dates', () => {
      const config = loadConfig({
        API_DEPRECATIONS: JSON.stringify([
          { path: '/api/v1/info', deprecation: '2026-01-01T00:00:00Z', sunset: '2026-07-01T00:00:00+02:00', link: 'https://example.com/migrate' },
          { path: '/api/v1', deprecation: '2026-01-01T00:00:00.123Z', sunset: '2026-01-01T00:00:00.123Z' },
        ]),
      });
      expect(config.apiDeprecations).toEqual([
        { path: '/api/v1/info', deprecation: new Date('2026-01-01T00:00:00Z'), sunset: new Date('2026-06-30T22:00:00Z'), link: 'https://example.com/migrate' },
        { path: '/api/v1', deprecation: new Date('2026-01-01T00:00:00.123Z'), sunset: new Date('2026-01-01T00:00:00.123Z') },
      ]);
      expect(loadConfig({ API_DEPRECATIONS: '[]' }).apiDeprecations).toEqual([]);
    });
  });

  describe('refused values name the variable', () => {
    it.each(['abc', '-1', '65536', '80.5', '1e3', '0x50', '3000 3001', '８０'])('PORT=%j', (value) => {
      expectRefused('PORT', value);
    });

    it.each([
      ['not a URL', 'api.example.com'],
      ['a path', 'https://api.example.com/leads'],
      ['a trailing slash', 'https://api.example.com/'],
      ['a query', 'https://api.example.com?x=1'],
      ['a fragment', 'https://api.example.com#x'],
      ['credentials', 'https://user:pw@api.example.com'],
      ['ftp', 'ftp://files.example.com'],
      ['a file URL', 'file:///etc/passwd'],
      ['upper case (not the origin byte for byte)', 'HTTPS://API.EXAMPLE.COM'],
      ['the default port spelled out', 'https://api.example.com:443'],
    ])('PUBLIC_BASE_URL with %s', (_name, value) => {
      expectRefused('PUBLIC_BASE_URL', value);
    });

    it.each(['two words:', 'tab\there:', 'é:', `${'x'.repeat(64)}:`, 'prod', 'a*[:', 'leads?:', ':leads\\:'])('REDIS_KEY_PREFIX=%j', (value) => {
      expectRefused('REDIS_KEY_PREFIX', value);
    });

    it.each(['text', 'ndjson', 'yes'])('LOG_FORMAT=%j', (value) => {
      expectRefused('LOG_FORMAT', value);
    });

    it('PUBLIC_BASE_URL with a path says which origin to use instead', () => {
      expect(expectRefused('PUBLIC_BASE_URL', 'https://api.example.com/v1/').message).toContain('https://api.example.com');
    });

    it('PUBLIC_BASE_URL refuses ftp as a scheme problem', () => {
      expect(expectRefused('PUBLIC_BASE_URL', 'ftp://files.example.com').message).toMatch(/http/);
    });

    it.each(['not a url', 'mysql://u:p@db/leads', 'sqlite:///tmp/x.db', 'http://db:5432/leads', 'postgres://u:p@db:99999/leads', '//db/leads'])(
      'DATABASE_URL=%j',
      (value) => {
        expectRefused('DATABASE_URL', value);
      },
    );

    it.each(['not a url', 'http://cache:6379', 'memcached://cache', 'redis//cache'])('REDIS_URL=%j', (value) => {
      expectRefused('REDIS_URL', value);
    });

    it.each(['verbose', 'warning', 'information', '3', 'info,debug'])('LOG_LEVEL=%j', (value) => {
      expectRefused('LOG_LEVEL', value);
    });

    it.each([
      ['a bare host', 'a.example'],
      ['a trailing slash', 'https://a.example/'],
      ['a path', 'https://a.example/app'],
      ['a wildcard inside a list', 'https://a.example,*'],
      ['an empty entry', 'https://a.example,'],
      ['a wildcard subdomain', 'https://*.example.com'],
    ])('CORS_ORIGINS with %s', (_name, value) => {
      expectRefused('CORS_ORIGINS', value);
    });

    it.each(['true', 'yes', '-1', '1.5s', 'loopback;10.0.0.1', '10.0.0.0/8 10.1.0.0/16', '10.0.0.1/abc', 'localhost'])('TRUST_PROXY=%j', (value) => {
      expectRefused('TRUST_PROXY', value);
    });

    // Words and ranges that look like hex digits are not addresses; Express's proxy-addr would otherwise throw at boot
    // without naming the variable.
    it.each(['bad', 'cafe', '999.999.999.999', '10.0.0.0/99', '10.0.0.1/8/1'])('TRUST_PROXY=%j (not an address)', (value) => {
      expectRefused('TRUST_PROXY', value);
    });

    it.each(['0', '3601', '-5', '5s', '1.5', 'long'])('KEEP_ALIVE_TIMEOUT=%j', (value) => {
      expectRefused('KEEP_ALIVE_TIMEOUT', value);
    });

    it.each([
      ['MAX_CONNECTIONS', ['-1', '1.5', 'many', '1000001']],
      ['MAX_CONNECTIONS_PER_ADDRESS', ['-1', '10%', '1000001']],
      ['MAX_HEADERS', ['0', '9', '1001', '100h']],
      ['WRITE_TIMEOUT', ['0', '3601', '30s']],
      ['IPV6_PREFIX_LENGTH', ['0', '15', '129', '/64']],
      ['MAX_ANSWER_BYTES', ['0', '65535', '1073741825', '1MiB', '1e6', '-65536', '65536.5']],
      ['CLIENT_SECRET_GRACE', ['-1', '2592001', '24h', '1.5']],
      ['AGENT_REFRESH_TOKEN_TTL', ['0s', '999ms', '366d', '30', 'forever']],
      ['AGENT_REFRESH_GRACE', ['6m', '30', '-1s']],
      ['EXPORT_MAX_CONCURRENT', ['0', '65', '-1', '2.5', 'two']],
      ['EXPORT_PAGE_SIZE', ['0', '10001', '1e3', '-1']],
      ['LEAD_RETENTION_DAYS', ['0', '-1', '1.5', '30d', '36501', 'forever']],
    ])('%s refuses %j', (variable, values) => {
      for (const value of values) expectRefused(variable, value);
    });

    it.each([
      'RATE_LIMIT_ANONYMOUS',
      'RATE_LIMIT_AGENT',
      'RATE_LIMIT_REGISTRATION',
      'RATE_LIMIT_TOKEN',
      'RATE_LIMIT_MCP_HOUSEKEEPING',
      'RATE_LIMIT_AGENT_PER_ADDRESS',
      'RATE_LIMIT_OPERATOR',
      'RATE_LIMIT_VERIFIED_AGENT',
    ])('%s refuses anything but <count>/<seconds>s with both at least 1', (variable) => {
      for (const value of ['60', '60/60', '60/s', '/60s', '0/60s', '60/0s', '-1/60s', '60 / 60s', '60/60m', '1.5/60s', 'abc']) {
        const error = expectRefused(variable, value);
        expect(error.message).toContain('60/60s');
        expect(error.message.match(/RATE_LIMIT_\w+/g)).toEqual([variable]);
      }
    });

    it('refuses an agent quota below ten times the anonymous one, naming RATE_LIMIT_AGENT', () => {
      const error = expectRefused('RATE_LIMIT_AGENT', '100/60s', { RATE_LIMIT_ANONYMOUS: '60/60s' });
      expect(error.message).toContain('10');
      expect(() => loadConfig({ RATE_LIMIT_ANONYMOUS: '60/60s', RATE_LIMIT_AGENT: '600/60s' })).not.toThrow();
      expect(() => loadConfig({ RATE_LIMIT_ANONYMOUS: '1/1s', RATE_LIMIT_AGENT: '600/60s' })).not.toThrow();
      expect(() => loadConfig({ RATE_LIMIT_ANONYMOUS: '2/1s', RATE_LIMIT_AGENT: '600/60s' })).toThrow(/RATE_LIMIT_AGENT/);
    });

    it('takes the per-address agent ceiling from RATE_LIMIT_AGENT unless set, and refuses one below the agent rate', () => {
      expect(loadConfig({ RATE_LIMIT_AGENT: '1200/60s' }).rateLimitAgentPerAddress).toEqual({ limit: 1200, windowSeconds: 60 });
      expect(loadConfig({ RATE_LIMIT_AGENT_PER_ADDRESS: '3000/60s' }).rateLimitAgentPerAddress).toEqual({ limit: 3000, windowSeconds: 60 });
      const error = expectRefused('RATE_LIMIT_AGENT_PER_ADDRESS', '599/60s');
      expect(error.message).toContain('RATE_LIMIT_AGENT');
      expect(() => loadConfig({ RATE_LIMIT_AGENT_PER_ADDRESS: '20/2s' })).not.toThrow();
    });

    it('gives claimed agents 6000/60s unless set, never less than RATE_LIMIT_AGENT, and refuses a set one below it', () => {
      expect(loadConfig({}).rateLimitVerifiedAgent).toEqual({ limit: 6000, windowSeconds: 60 });
      expect(loadConfig({ RATE_LIMIT_AGENT: '12000/60s' }).rateLimitVerifiedAgent).toEqual({ limit: 12000, windowSeconds: 60 });
      expect(loadConfig({ RATE_LIMIT_VERIFIED_AGENT: '100/1s' }).rateLimitVerifiedAgent).toEqual({ limit: 100, windowSeconds: 1 });
      const error = expectRefused('RATE_LIMIT_VERIFIED_AGENT', '599/60s');
      expect(error.message).toContain('RATE_LIMIT_AGENT');
    });

    it('refuses a captcha half configured, naming what is missing, and a provider it does not know', () => {
      expectRefused('CAPTCHA_PROVIDER', 'recaptcha', { CAPTCHA_SECRET: 's', CAPTCHA_SITE_KEY: 'k' });
      expectRefused('CAPTCHA_SECRET', ' ', { CAPTCHA_PROVIDER: 'turnstile', CAPTCHA_SITE_KEY: 'k' });
      expectRefused('CAPTCHA_SITE_KEY', '', { CAPTCHA_PROVIDER: 'hcaptcha', CAPTCHA_SECRET: 's' });
      expect(failure({ CAPTCHA_SECRET: 's' }).message).toMatch(/CAPTCHA_SECRET needs CAPTCHA_PROVIDER/);
      expectRefused('CAPTCHA_VERIFY_URL', 'ftp://example.com/verify', { CAPTCHA_PROVIDER: 'turnstile', CAPTCHA_SECRET: 's', CAPTCHA_SITE_KEY: 'k' });
      expectRefused('SPAM_RETENTION_DAYS', '0');
    });

    it('refuses an unknown or repeated screening rule, and an allowed domain that is not a domain name, quoting the entry', () => {
      expect(expectRefused('SCREENING_RULES', 'honeypot,captchas').message).toContain('"captchas"');
      expect(expectRefused('SCREENING_RULES', 'honeypot,,markup').message).toContain('""');
      expect(expectRefused('SCREENING_RULES', 'markup,markup').message).toContain('markup twice');
      expect(expectRefused('SCREENING_ALLOW_DOMAINS', 'example.com,@mailinator.com').message).toContain('"@mailinator.com"');
      expectRefused('SCREENING_ALLOW_DOMAINS', 'https://example.com');
      expectRefused('SCREENING_ALLOW_DOMAINS', 'localhost');
    });

    describe('API_DEPRECATIONS', () => {
      const entry = { path: '/api/v1', deprecation: '2026-01-01T00:00:00Z' };
      const refuse = (value: unknown, mention?: RegExp) => {
        const error = expectRefused('API_DEPRECATIONS', typeof value === 'string' ? value : JSON.stringify(value));
        if (mention) expect(error.message).toMatch(mention);
      };

      it.each(['[', 'not json', "[{'path':'/'}]", '[1,]'])('refuses text that is not JSON: %j', (value) => refuse(value, /JSON array/));

      it.each([{}, 'x', 1, null, true])('refuses JSON that is not an array: %j', (value) => refuse(value, /JSON array/));

      it.each([1, 'x', null, []])('refuses an entry that is not an object: %j', (value) => refuse([value], /entry 0 must be an object/));

      it('names the offending entry by index', () => refuse([entry, { ...entry, path: 'api' }], /entry 1\.path/));

      it.each([undefined, '', 'api/v1', 7])('refuses a path that is not a route prefix: %j', (path) => refuse([{ ...entry, path }], /entry 0\.path/));

      it.each([
        ['missing', undefined],
        ['a date without a time', '2026-01-01'],
        ['a time without a zone', '2026-01-01T00:00:00'],
        ['month 13', '2026-13-01T00:00:00Z'],
        ['day 32', '2026-01-32T00:00:00Z'],
        ['hour 25', '2026-01-01T25:00:00Z'],
        ['an IMF-fixdate', 'Thu, 01 Jan 2026 00:00:00 GMT'],
        ['a Unix timestamp', 1767225600],
        ['a word', 'yesterday'],
      ])('refuses a deprecation that is %s', (_name, deprecation) => refuse([{ ...entry, deprecation }], /entry 0\.deprecation must be an RFC 3339 date-time/));

      it.each([
        ['not a date', 'soon'],
        ['a date without a time', '2026-07-01'],
      ])('refuses a sunset that is %s', (_name, sunset) => refuse([{ ...entry, sunset }], /entry 0\.sunset must be an RFC 3339 date-time/));

      it('refuses a sunset before its deprecation, comparing instants across offsets', () => {
        refuse([{ ...entry, sunset: '2025-12-31T23:59:59Z' }], /entry 0\.sunset must not be earlier/);
        // 00:30+01:00 is 23:30Z the day before.
        refuse([{ ...entry, sunset: '2026-01-01T00:30:00+01:00' }], /entry 0\.sunset must not be earlier/);
      });

      it.each(['ftp://example.com', '/docs/migrate', 'example.com', 3])('refuses a link that is not http(s): %j', (link) =>
        refuse([{ ...entry, link }], /entry 0\.link/),
      );

      it('refuses unknown keys and lists them', () => refuse([{ ...entry, sunsett: '2026-07-01T00:00:00Z', note: 'x' }], /unknown keys: sunsett, note/));
    });
  });

  describe('TIME_ZONE', () => {
    it.each([
      ['America/Sao_Paulo', 'America/Sao_Paulo'],
      ['Europe/Lisbon', 'Europe/Lisbon'],
      // Aliases and links of the tz database are IANA names too.
      ['UTC', 'UTC'],
      ['Etc/GMT+3', 'Etc/GMT+3'],
      ['america/sao_paulo', 'America/Sao_Paulo'],
    ])('takes %s', (value, zone) => {
      expect(loadConfig({ TIME_ZONE: value }).timeZone).toBe(zone);
    });

    it.each(['Brasil/Sao_Paulo', 'BRT', '-03:00', '+03:00', 'America/Sao Paulo', 'São Paulo', '../etc/passwd'])('refuses %j, naming TIME_ZONE', (value) => {
      expect(expectRefused('TIME_ZONE', value).message).toContain('must be an IANA time zone name');
    });
  });

  describe('DATABASE_URL is never echoed', () => {
    const SECRET = 'Sup3r-S3cret-pa55';
    it.each([
      ['an unknown scheme', `mysql://leads:${SECRET}@db.internal:5432/leads`],
      ['an http scheme', `http://leads:${SECRET}@db.internal/leads`],
      ['a port out of range', `postgres://leads:${SECRET}@db.internal:99999/leads`],
      ['a bare connection string', `host=db.internal user=leads password=${SECRET}`],
      ['a malformed authority', `postgres://leads:${SECRET}@[db.internal/leads`],
    ])('when it has %s', (_name, value) => {
      const { message } = expectRefused('DATABASE_URL', value);
      expect(message).not.toContain(SECRET);
      expect(message).not.toContain(value);
      expect(message).not.toContain('db.internal');
      expect(message).not.toContain('leads:');
    });

    it('when another variable is the bad one', () => {
      const { message } = expectRefused('PORT', 'x', { DATABASE_URL: `postgres://leads:${SECRET}@db.internal/leads` });
      expect(message).not.toContain(SECRET);
    });

    it('whatever the password and the scheme', () => {
      const password = fc.string({ unit: fc.constantFrom(...'abcXYZ0189-_.~!$&*+,;='), minLength: 8, maxLength: 24 });
      fc.assert(
        fc.property(
          fc.constantFrom('mysql', 'http', 'mongodb', 'redis', 'postgress', 'pg'),
          password,
          fc.constantFrom('', ':5432', ':0', ':70000', ':x'),
          (scheme, pw, port) => {
            const value = `${scheme}://user:${pw}@host.example${port}/db`;
            const { message } = expectRefused('DATABASE_URL', value);
            expect(message).not.toContain(pw);
            expect(message).not.toContain('host.example');
          },
        ),
        { numRuns: 100 },
      );
    });

    it('nor is a REDIS_URL password', () => {
      for (const value of [`http://:${SECRET}@cache.internal:6379`, `redis://:${SECRET}@cache.internal:99999`]) {
        expect(expectRefused('REDIS_URL', value).message).not.toContain(SECRET);
      }
    });
  });

  describe('SECRETS_KEY', () => {
    const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7 + 250));

    it.each([
      ['base64', key.toString('base64')],
      ['base64 without padding', key.toString('base64').replace(/=$/, '')],
      ['base64url', key.toString('base64url')],
      ['hex', key.toString('hex')],
      ['upper-case hex', key.toString('hex').toUpperCase()],
    ])('takes 32 bytes as %s', (_name, value) => {
      expect(key.toString('base64')).toMatch(/[+/]/);
      expect(loadConfig({ SECRETS_KEY: value }).secretsKey).toEqual(key);
    });

    it('is optional, PostgreSQL included (migration:run reads no secret)', () => {
      expect(loadConfig({ DATABASE_URL: 'postgres://db.internal/leads' }).secretsKey).toBeUndefined();
    });

    it.each([
      ['16 bytes of base64', Buffer.alloc(16, 1).toString('base64')],
      ['48 bytes of base64', Buffer.alloc(48, 1).toString('base64')],
      ['31 bytes of hex', Buffer.alloc(31, 1).toString('hex')],
      ['hex with a stray letter', `${key.toString('hex').slice(0, 63)}g`],
      ['base64 and base64url mixed', `${key.toString('base64url').slice(0, 42)}+`.replace(/^./, '-')],
      ['a passphrase', 'correct horse battery staple and more words.'],
      ['base64 with a space inside', `${key.toString('base64').slice(0, 20)} ${key.toString('base64').slice(21)}`],
    ])('refuses %s, never echoing the value', (_name, value) => {
      const { message } = expectRefused('SECRETS_KEY', value);
      expect(message).not.toContain(value);
      expect(message).toContain('openssl rand -base64 32');
    });
  });

  describe('webhooks', () => {
    it('reads durations and lists of durations', () => {
      const { webhooks } = loadConfig({
        WEBHOOK_RETRY_SCHEDULE: '250ms, 2s,1m',
        WEBHOOK_TIMEOUT: '500ms',
        WEBHOOK_DISABLE_AFTER: '2h',
        WEBHOOKS_ALLOW_PRIVATE: 'true',
      });
      expect(webhooks).toMatchObject({ retrySchedule: [250, 2000, 60_000], timeoutMs: 500, disableAfterMs: 7_200_000, allowPrivate: true });
      expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: 'none' }).webhooks.retrySchedule).toEqual([]);
      expect(loadConfig({ WEBHOOK_WORKER: 'false' }).webhooks.worker).toBe(false);
    });

    it.each([
      ['WEBHOOK_RETRY_SCHEDULE', '5'],
      ['WEBHOOK_RETRY_SCHEDULE', '5s,,5m'],
      ['WEBHOOK_RETRY_SCHEDULE', '31d'],
      ['WEBHOOK_RETRY_SCHEDULE', Array(21).fill('1s').join(',')],
      ['WEBHOOK_TIMEOUT', '0s'],
      ['WEBHOOK_TIMEOUT', '2m'],
      ['WEBHOOK_DISABLE_AFTER', '-1d'],
      ['WEBHOOKS_ALLOW_PRIVATE', 'yes'],
      ['WEBHOOK_CONCURRENCY', '0'],
    ])('refuses %s=%s', (name, value) => {
      expectRefused(name, value);
    });

    it('refuses WEBHOOKS_ALLOW_PRIVATE=true with NODE_ENV=production, naming both, unless WEBHOOKS_ALLOW_PRIVATE_IN_PRODUCTION=true', () => {
      const { message } = expectRefused('WEBHOOKS_ALLOW_PRIVATE', 'true', { NODE_ENV: 'production' });
      expect(message).toContain('NODE_ENV=production');
      expect(message).toContain('WEBHOOKS_ALLOW_PRIVATE_IN_PRODUCTION=true');
      expect(loadConfig({ NODE_ENV: 'production', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_ALLOW_PRIVATE_IN_PRODUCTION: 'true' }).webhooks.allowPrivate).toBe(
        true,
      );
      expect(loadConfig({ NODE_ENV: 'development', WEBHOOKS_ALLOW_PRIVATE: 'true' }).webhooks.allowPrivate).toBe(true);
      expect(loadConfig({ NODE_ENV: 'production', WEBHOOKS_ALLOW_PRIVATE: 'false' }).webhooks.allowPrivate).toBe(false);
      expectRefused('WEBHOOKS_ALLOW_PRIVATE_IN_PRODUCTION', 'yes', { NODE_ENV: 'production', WEBHOOKS_ALLOW_PRIVATE: 'true' });
    });
  });
  describe('inbox', () => {
    it('reads the session timeouts and the daily cap of verification mail', () => {
      expect(loadConfig({ INBOX_IDLE_TIMEOUT: '30m', INBOX_SESSION_LIFETIME: '1d', VERIFICATION_MAIL_DAILY_LIMIT: '20' }).inbox).toEqual({
        idleTimeoutMs: 1_800_000,
        sessionLifetimeMs: 86_400_000,
        verificationMailDailyLimit: 20,
      });
    });

    it.each([
      ['INBOX_IDLE_TIMEOUT', '8'],
      ['INBOX_IDLE_TIMEOUT', '30s'],
      ['INBOX_IDLE_TIMEOUT', '8d'],
      ['INBOX_SESSION_LIFETIME', '2y'],
      ['VERIFICATION_MAIL_DAILY_LIMIT', '-1'],
      ['VERIFICATION_MAIL_DAILY_LIMIT', 'many'],
    ])('refuses %s=%s', (name, value) => {
      expectRefused(name, value);
    });
  });

  describe('mail', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const dkim = { DKIM_DOMAIN: 'empresa.example', DKIM_SELECTOR: 'leads2026', DKIM_PRIVATE_KEY: rsa };

    it.each([
      ['smtp://mail.empresa.example:587', null],
      ['smtps://leads:secret@mail.empresa.example', null],
      ['smtp://[::1]:2525', null],
    ])('takes SMTP_URL=%s', (url) => {
      expect(loadConfig({ SMTP_URL: url }).mail.smtpUrl).toBe(url);
    });

    it.each([
      ['http://mail.empresa.example', 'must start with smtp:// or smtps://'],
      ['smtp://mail.empresa.example:587?tls.rejectUnauthorized=false', 'no path or query'],
      ['smtp://mail.empresa.example/relay', 'no path or query'],
      ['mail.empresa.example:25', 'must start with smtp:// or smtps://'],
      ['smtp://', 'must name a host'],
    ])('refuses SMTP_URL=%s, without echoing it', (url, why) => {
      const { message } = expectRefused('SMTP_URL', url);
      expect(message).toContain(why);
    });

    it('never echoes the password of a refused SMTP_URL', () => {
      const { message } = expectRefused('SMTP_URL', 'smtp://leads:Sup3r-S3cret@mail.empresa.example/x?y=1');
      expect(message).not.toContain('Sup3r-S3cret');
    });

    it('takes credentials in SMTP_URL or in SMTP_USER and SMTP_PASSWORD: both together, never both ways, never without a server', () => {
      expect(loadConfig({ SMTP_URL: 'smtp://mail.empresa.example', SMTP_USER: 'leads', SMTP_PASSWORD: 'p' }).mail).toMatchObject({
        smtpUser: 'leads',
        smtpPassword: 'p',
      });
      expect(expectRefused('SMTP_USER', 'leads', { SMTP_URL: 'smtp://u:p@mail.empresa.example', SMTP_PASSWORD: 'p' }).message).toContain('not both');
      expect(expectRefused('SMTP_USER', 'leads', { SMTP_URL: 'smtp://mail.empresa.example' }).message).toContain('set both or neither');
      expect(failure({ SMTP_URL: 'smtp://mail.empresa.example', SMTP_PASSWORD: 'p' }).message).toMatch(/\bSMTP_USER\b.*both or neither/);
      expect(expectRefused('SMTP_USER', 'leads', { SMTP_PASSWORD: 'p' }).message).toContain('SMTP_URL, which is not set');
    });

    it('SMTP_REQUIRE_TLS is true or false, default false', () => {
      expect(loadConfig({ SMTP_REQUIRE_TLS: 'true' }).mail.requireTls).toBe(true);
      expect(loadConfig({}).mail.requireTls).toBe(false);
      expectRefused('SMTP_REQUIRE_TLS', 'starttls');
    });

    it.each([
      ['leads@empresa.example', 'leads@empresa.example', null],
      ['Leads da Empresa <leads@empresa.example>', 'leads@empresa.example', 'Leads da Empresa'],
      ['<leads@empresa.example>', 'leads@empresa.example', null],
      ['Contato Ação <contato+leads@empresa.example>', 'contato+leads@empresa.example', 'Contato Ação'],
    ])('takes MAIL_FROM=%s', (from, address, name) => {
      expect(loadConfig({ MAIL_FROM: from }).mail).toMatchObject({ from, fromAddress: address, fromName: name });
    });

    it.each([
      'leads',
      'leads@',
      'leads@empresa..example',
      'two words@empresa.example',
      'a@empresa.example, b@empresa.example',
      'Team, Sales <leads@empresa.example>',
      '"Quoted" <leads@empresa.example>',
      'x@evil.example <leads@empresa.example>',
      'Leads <leads@empresa.example',
      'Leads <<leads@empresa.example>>',
    ])('refuses MAIL_FROM=%j', (from) => {
      expectRefused('MAIL_FROM', from);
    });

    it('defaults MAIL_FROM to leads@ the public host, or leads@localhost.localdomain for an address or a single label', () => {
      expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.empresa.example' }).mail.fromAddress).toBe('leads@api.empresa.example');
      expect(loadConfig({ PUBLIC_BASE_URL: 'http://192.0.2.7:3000' }).mail.fromAddress).toBe('leads@localhost.localdomain');
      expect(loadConfig({ PUBLIC_BASE_URL: 'http://[2001:db8::1]' }).mail.fromAddress).toBe('leads@localhost.localdomain');
    });

    it('MAIL_UNSUBSCRIBE_MAILTO is an address', () => {
      expect(loadConfig({ MAIL_UNSUBSCRIBE_MAILTO: 'descadastro@empresa.example' }).mail.unsubscribeMailto).toBe('descadastro@empresa.example');
      expectRefused('MAIL_UNSUBSCRIBE_MAILTO', 'mailto:descadastro@empresa.example');
    });

    it('takes DKIM with all three settings, a key whose line breaks are written \\n included', () => {
      expect(loadConfig(dkim).mail.dkim).toEqual({ domain: 'empresa.example', selector: 'leads2026', privateKey: rsa.trim() });
      expect(loadConfig({ ...dkim, DKIM_PRIVATE_KEY: rsa.trim().replaceAll('\n', '\\n') }).mail.dkim?.privateKey).toBe(rsa.trim());
    });

    it.each([['DKIM_DOMAIN'], ['DKIM_SELECTOR'], ['DKIM_PRIVATE_KEY']])('refuses DKIM without %s: all three or none', (missing) => {
      const { message } = failure({ ...dkim, [missing]: undefined });
      expect(message).toContain('DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY go together');
    });

    it('refuses a DKIM key that is no key, or one Nodemailer cannot sign with (Ed25519), never echoing it', () => {
      const ed25519 = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      expect(expectRefused('DKIM_PRIVATE_KEY', ed25519, dkim).message).toContain('RSA');
      const { message } = expectRefused('DKIM_PRIVATE_KEY', 'not-a-key-S3cret', dkim);
      expect(message).not.toContain('S3cret');
    });

    it.each([
      ['DKIM_DOMAIN', 'localhost'],
      ['DKIM_DOMAIN', 'empresa.example; s=evil'],
      ['DKIM_SELECTOR', 'leads 2026'],
      ['DKIM_SELECTOR', 'a;b=c'],
    ])('refuses %s=%j', (name, value) => {
      expectRefused(name, value, dkim);
    });

    it('reads EMAIL_RETRY_SCHEDULE with the grammar of WEBHOOK_RETRY_SCHEDULE', () => {
      expect(loadConfig({ EMAIL_RETRY_SCHEDULE: '250ms, 2s,1m,1h,1d' }).mail.retrySchedule).toEqual([250, 2000, 60_000, 3_600_000, 86_400_000]);
      expect(loadConfig({ EMAIL_RETRY_SCHEDULE: 'none' }).mail.retrySchedule).toEqual([]);
      for (const value of ['5', '5s,,5m', '31d', '1w', '-1s', Array(21).fill('1s').join(',')]) expectRefused('EMAIL_RETRY_SCHEDULE', value);
    });

    it('NODE_ENV=production is known to the mail settings (the .eml fallback warns)', () => {
      expect([loadConfig({ NODE_ENV: 'production' }).mail.production, loadConfig({ NODE_ENV: 'test' }).mail.production]).toEqual([true, false]);
    });
  });

  describe('NOTIFY_DIGEST_AT', () => {
    it.each([
      ['08:00', { hour: 8, minute: 0 }],
      ['00:00', { hour: 0, minute: 0 }],
      ['23:59', { hour: 23, minute: 59 }],
      [' 17:30 ', { hour: 17, minute: 30 }],
    ])('takes %j', (value, expected) => {
      expect(loadConfig({ NOTIFY_DIGEST_AT: value }).notifyDigestAt).toEqual(expected);
    });

    it.each(['24:00', '8:00', '08:60', '0800', '08:00:00', '8am', '-1:00'])('refuses %j', (value) => {
      expectRefused('NOTIFY_DIGEST_AT', value);
    });
  });

  describe('observability', () => {
    it('has no metrics listener and no tracing by default, and degrades health after 15 minutes of backlog', () => {
      expect(loadConfig({}).observability).toEqual({ metrics: null, outboxDegradedAfterMs: 900_000, tracing: null });
    });

    it('reads the metrics listener, loopback unless METRICS_HOST says otherwise', () => {
      expect(loadConfig({ METRICS_PORT: '9464' }).observability.metrics).toEqual({ port: 9464, host: '127.0.0.1' });
      expect(loadConfig({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' }).observability.metrics).toEqual({ port: 0, host: '0.0.0.0' });
    });

    it('turns tracing on with an OTLP endpoint, with the standard sampler and batch variables', () => {
      expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).observability.tracing).toEqual({
        sampler: { kind: 'parentbased_always_on', ratio: 1 },
        propagateToWebhooks: true,
        batch: { scheduledDelayMillis: 5000, maxQueueSize: 2048, maxExportBatchSize: 512, exportTimeoutMillis: 30_000 },
      });
      const tuned = loadConfig({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example/v1/traces',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        WEBHOOK_PROPAGATE_TRACE: 'false',
      }).observability.tracing;
      expect(tuned).toMatchObject({
        sampler: { kind: 'parentbased_traceidratio', ratio: 0.25 },
        propagateToWebhooks: false,
        batch: { scheduledDelayMillis: 100 },
      });
      expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).observability.tracing).toBeNull();
      expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).observability.tracing).toBeNull();
    });

    it('refuses the public port for metrics', () => {
      expect(() => loadConfig({ PORT: '8080', METRICS_PORT: '8080' })).toThrow('METRICS_PORT must differ from PORT');
    });

    it.each([
      ['METRICS_PORT', '70000'],
      ['METRICS_PORT', 'metrics'],
      ['OUTBOX_DEGRADED_AFTER', '15'],
      ['OUTBOX_DEGRADED_AFTER', '0s'],
      ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
      ['OTEL_TRACES_SAMPLER', 'sometimes'],
      ['OTEL_TRACES_SAMPLER_ARG', '2'],
      ['WEBHOOK_PROPAGATE_TRACE', 'maybe'],
    ])('refuses %s=%s', (name, value) => {
      expectRefused(name, value);
    });
  });

  describe('single sign-on (OIDC_*)', () => {
    const provider = { OIDC_ISSUER: 'https://accounts.google.com', OIDC_CLIENT_ID: 'inbox', OIDC_CLIENT_SECRET: 'secret' };

    it('is off by default, and reads the provider with its defaults', () => {
      expect(loadConfig({}).oidc).toBeNull();
      expect(loadConfig(provider).oidc).toEqual({
        issuer: 'https://accounts.google.com',
        clientId: 'inbox',
        clientSecret: 'secret',
        name: 'accounts.google.com',
        allowedDomains: new Set(),
        defaultRole: 'viewer',
        trustEmailIssuers: new Set(),
        only: false,
      });
    });

    it('reads the name, the allowed domains, the default role, the trusted issuers and OIDC_ONLY', () => {
      const oidc = loadConfig({
        ...provider,
        OIDC_NAME: 'Google',
        OIDC_ALLOWED_DOMAINS: 'Empresa.com.br, filial.empresa.com.br',
        OIDC_DEFAULT_ROLE: 'marketer',
        OIDC_TRUST_EMAIL: 'https://login.microsoftonline.com/tenant/v2.0',
        OIDC_ONLY: 'true',
      }).oidc!;
      expect(oidc).toMatchObject({ name: 'Google', defaultRole: 'marketer', only: true });
      expect([...oidc.allowedDomains]).toEqual(['empresa.com.br', 'filial.empresa.com.br']);
      expect([...oidc.trustEmailIssuers]).toEqual(['https://login.microsoftonline.com/tenant/v2.0']);
    });

    it('takes an http issuer on the loopback only', () => {
      expect(loadConfig({ ...provider, OIDC_ISSUER: 'http://127.0.0.1:8080/realms/empresa' }).oidc!.issuer).toBe('http://127.0.0.1:8080/realms/empresa');
      expectRefused('OIDC_ISSUER', 'http://keycloak.empresa.com.br/realms/empresa', provider);
    });

    it('knows the inbox roles', () => {
      expect([...INBOX_ROLES]).toEqual([...ROLES]);
    });

    it.each([
      ['OIDC_ISSUER', 'accounts.google.com'],
      ['OIDC_ISSUER', 'https://accounts.google.com?x=1'],
      ['OIDC_ALLOWED_DOMAINS', 'empresa'],
      ['OIDC_ALLOWED_DOMAINS', '@empresa.com.br'],
      ['OIDC_DEFAULT_ROLE', 'owner'],
      ['OIDC_DEFAULT_ROLE', 'admin'],
      ['OIDC_TRUST_EMAIL', 'login.microsoftonline.com'],
      ['OIDC_ONLY', 'yes'],
    ])('refuses %s=%s', (name, value) => {
      expectRefused(name, value, provider);
    });

    it('wants an https public URL with it, but on localhost', () => {
      expectRefused('PUBLIC_BASE_URL', 'http://leads.empresa.com.br', provider);
      expect(loadConfig({ ...provider, PUBLIC_BASE_URL: 'http://127.0.0.1:3000' }).oidc).not.toBeNull();
    });

    it('refuses part of the provider, and OIDC_ONLY without it', () => {
      expectRefused('OIDC_CLIENT_SECRET', '', { OIDC_ISSUER: provider.OIDC_ISSUER, OIDC_CLIENT_ID: 'inbox' });
      expectRefused('OIDC_ONLY', 'true');
    });
  });
});
