import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { knownTimeZone } from '../time/time-zone.js';
import { packagePath } from './package-root.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type LogFormat = 'json' | 'pretty';

export interface RateLimitQuota {
  limit: number;
  windowSeconds: number;
}

export interface ApiDeprecation {
  path: string;
  deprecation: Date;
  sunset?: Date;
  link?: string;
}

export interface AppConfig {
  port: number;
  publicBaseUrl: string;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  /** Put before every Redis key this service writes, so that deployments sharing one Redis keep apart. */
  redisKeyPrefix: string;
  logLevel: LogLevel;
  /** JSON lines, or coloured human-readable lines (pino-pretty) for a developer's terminal. */
  logFormat: LogFormat;
  corsOrigins: '*' | string[];
  /** Express `trust proxy`: false (socket address only), a hop count, or a list of trusted addresses. */
  trustProxy: false | number | string[];
  /** How long an idle keep-alive connection stays open; behind a load balancer, longer than the balancer's own idle timeout. */
  keepAliveTimeoutSeconds: number;
  /** Concurrent connections in total (0: no cap); beyond it new sockets are closed unread. */
  maxConnections: number;
  /** Concurrent connections per socket address, for sockets not from a trusted proxy (0: no cap). */
  maxConnectionsPerAddress: number;
  /** Header fields a request may carry; more is a 431, never a silent drop. */
  maxHeaders: number;
  /** How long a response's bytes may wait for a client that does not read them before the socket is destroyed. */
  writeTimeoutSeconds: number;
  /** IPv6 clients share rate limits and idempotency scopes by this prefix (a /64 is one subscriber). */
  ipv6PrefixLength: number;
  rateLimitAnonymous: RateLimitQuota;
  rateLimitAgent: RateLimitQuota;
  /** Claimed registrations (the claim ceremony): by registration, apart from the per-address ceiling of unclaimed ones. */
  rateLimitVerifiedAgent: RateLimitQuota;
  /**
   * The ceiling shared by the agent quotas of every live registration made from one client address
   * (docs/decisions/0013-identity-ceiling-per-address.md).
   */
  rateLimitAgentPerAddress: RateLimitQuota;
  /** Per-client quota of operator clients' tokens (client credentials grant) on the caller-tier routes. */
  rateLimitOperator: RateLimitQuota;
  /** Per-IP quota of agent registrations, so that nobody mints unlimited identities. */
  rateLimitRegistration: RateLimitQuota;
  /** Per-IP quota of the token and revocation endpoints. */
  rateLimitToken: RateLimitQuota;
  /** Per-caller allowance of MCP protocol housekeeping (initialize, notifications, ping, lists): messages that do no work. */
  rateLimitMcpHousekeeping: RateLimitQuota;
  /** The most bytes one answer built in memory may reach (MCP results, GraphQL answers). */
  maxAnswerBytes: number;
  /**
   * How long an operator client's previous secret keeps working after `clients:rotate`, in seconds
   * (docs/decisions/0021-operator-clients-and-client-credentials.md).
   */
  clientSecretGraceSeconds: number;
  /**
   * How long an agent's refresh token lives, in milliseconds; each rotation starts a new one
   * (docs/decisions/0030-agent-refresh-tokens.md).
   */
  agentRefreshTokenTtlMs: number;
  /** How long after its rotation a spent refresh token still gets its successor rather than revoking its family. */
  agentRefreshGraceMs: number;
  /** Lead exports streaming at once on this instance; one more is refused with 503 export_busy. */
  exportMaxConcurrent: number;
  /** Leads an export reads per query (one short keyset query per page, no transaction across pages). */
  exportPageSize: number;
  apiDeprecations: ApiDeprecation[];
  /**
   * The team's IANA time zone: a plain date in a filter is a day here, and the pt-BR export writes date-times on its
   * clock (src/time/time-zone.ts).
   */
  timeZone: string;
  /**
   * Leads older than this many days are erased, with what refers to them (docs/decisions/0029-data-subject-requests.md);
   * null keeps them forever.
   */
  leadRetentionDays: number | null;
  /** Leads screened as spam are erased this many days after they were received (docs/decisions/0033-screening.md). */
  spamRetentionDays: number;
  /** The captcha anonymous leads carry, verified at intake; null when none is configured. */
  captcha: CaptchaConfig | null;
  /** Per-address quota of GET /forms/token. */
  rateLimitFormToken: RateLimitQuota;
  /** The screening rules that run at intake (SCREENING_RULES, default all). */
  screeningRules: ReadonlySet<ScreeningRule>;
  /** E-mail domains the disposable-address rule never holds (SCREENING_ALLOW_DOMAINS), lower case. */
  screeningAllowDomains: ReadonlySet<string>;
  webhooks: WebhookConfig;
  /** Outgoing e-mail (docs/decisions/0035-email-notifications.md). */
  mail: MailConfig;
  /** When the daily digest goes out, as hours and minutes on the TIME_ZONE clock (NOTIFY_DIGEST_AT, default 08:00). */
  notifyDigestAt: { hour: number; minute: number };
  /**
   * The 32-byte key that seals stored secrets (signing keys, webhook secrets). Unset: on SQLite a key file in DATA_DIR;
   * PostgreSQL needs it (src/secrets/secrets-key.ts), but maintenance commands that read no secret run without it.
   */
  secretsKey?: Buffer;
  /** The inbox (issue 35): how long its sessions last. */
  inbox: InboxConfig;
  /** What the people who run the service see (docs/decisions/0042-observability.md). */
  observability: ObservabilityConfig;
  /** Single sign-on to the inbox through an OpenID Provider (docs/decisions/0043-inbox-single-sign-on.md); null: off. */
  oidc: OidcConfig | null;
  version: string;
}

/** The inbox's roles (src/people/roles.ts, which a spec holds equal): config sits below the features. */
export const INBOX_ROLES = ['viewer', 'marketer', 'admin'] as const;

export interface OidcConfig {
  /** OIDC_ISSUER: discovery reads `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** OIDC_NAME: the button says "Entrar com <name>"; default the issuer's host. */
  name: string;
  /** OIDC_ALLOWED_DOMAINS, lower case: anyone whose verified address is in one is added on first sign-in. */
  allowedDomains: ReadonlySet<string>;
  /** OIDC_DEFAULT_ROLE: the role of a person added by the provider's word. */
  defaultRole: (typeof INBOX_ROLES)[number];
  /** OIDC_TRUST_EMAIL: issuers whose `email` is taken without `email_verified` (Entra ID sends none). */
  trustEmailIssuers: ReadonlySet<string>;
  /** OIDC_ONLY: the e-mailed code sign-in is off. */
  only: boolean;
}

export interface ObservabilityConfig {
  /** The Prometheus listener (METRICS_PORT, METRICS_HOST); null: no listener, and Node's own metrics are not collected. */
  metrics: { port: number; host: string } | null;
  /** Health is degraded while an enabled subscriber's oldest pending delivery is older than this (OUTBOX_DEGRADED_AFTER). */
  outboxDegradedAfterMs: number;
  /** OTLP/HTTP trace export, on when OTEL_EXPORTER_OTLP_ENDPOINT (or its _TRACES_ form) is set; null: off. */
  tracing: TracingConfig | null;
}

export interface TracingConfig {
  /** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, as the OpenTelemetry specification names them. */
  sampler: { kind: TraceSampler; ratio: number };
  /** Whether webhook deliveries carry `traceparent` (WEBHOOK_PROPAGATE_TRACE, default true). */
  propagateToWebhooks: boolean;
  /** The batch span processor's OTEL_BSP_* settings (the specification's defaults). */
  batch: { scheduledDelayMillis: number; maxQueueSize: number; maxExportBatchSize: number; exportTimeoutMillis: number };
}

export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

export interface InboxConfig {
  /** A session unused this long ends (INBOX_IDLE_TIMEOUT, default 8h), in milliseconds. */
  idleTimeoutMs: number;
  /** A session ends this long after sign-in whatever its use (INBOX_SESSION_LIFETIME, default 7d), in milliseconds. */
  sessionLifetimeMs: number;
  /** Verification mails sent per UTC day, all addresses together (VERIFICATION_MAIL_DAILY_LIMIT, default 500). */
  verificationMailDailyLimit: number;
}

export interface MailConfig {
  /**
   * SMTP_URL (`smtp://` or `smtps://`, credentials in it or in SMTP_USER/SMTP_PASSWORD); null writes every message as
   * an .eml file under DATA_DIR/mail/ instead.
   */
  smtpUrl: string | null;
  smtpUser: string | null;
  smtpPassword: string | null;
  /** STARTTLS made mandatory (SMTP_REQUIRE_TLS); otherwise used whenever the server offers it. */
  requireTls: boolean;
  /** MAIL_FROM: the sender, an address or `Name <address>`; default `leads@` the PUBLIC_BASE_URL host. */
  from: string;
  /** MAIL_FROM's address alone (its domain names the Message-IDs), and its display name or null. */
  fromAddress: string;
  fromName: string | null;
  /** MAIL_UNSUBSCRIBE_MAILTO: a mailbox someone reads, offered as a `mailto:` in List-Unsubscribe; null offers none. */
  unsubscribeMailto: string | null;
  /** DKIM signing (DKIM_DOMAIN, DKIM_SELECTOR, DKIM_PRIVATE_KEY: all three or none). */
  dkim: { domain: string; selector: string; privateKey: string } | null;
  /** EMAIL_RETRY_SCHEDULE: delays of the retries after a 4xx or a connection failure. */
  retrySchedule: number[];
  /** NODE_ENV=production: the .eml fallback (no SMTP_URL) then warns at start that nobody receives the mail. */
  production: boolean;
}

export type CaptchaProvider = 'turnstile' | 'hcaptcha';

/**
 * The screening rules SCREENING_RULES can name (src/screening/screening.service.ts): `captcha` and `form_token` bring
 * several reasons each; every other rule brings the reason of its own name.
 */
export const SCREENING_RULE_NAMES = [
  'captcha',
  'disposable_email',
  'honeypot',
  'form_token',
  'too_many_links',
  'markup',
  'spreadsheet_formula',
  'duplicate_burst',
] as const;
export type ScreeningRule = (typeof SCREENING_RULE_NAMES)[number];

/** A captcha provider (docs/decisions/0033-screening.md): CAPTCHA_PROVIDER with its secret and site key. */
export interface CaptchaConfig {
  provider: CaptchaProvider;
  secret: string;
  siteKey: string;
  /** The provider's siteverify endpoint, or an operator's proxy. */
  verifyUrl: string;
  /** The widget's script, which the form script loads. */
  scriptUrl: string;
}

/** Each provider's documented siteverify endpoint and widget script. */
const CAPTCHA_DEFAULTS: Record<CaptchaProvider, { verifyUrl: string; scriptUrl: string }> = {
  turnstile: {
    verifyUrl: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    scriptUrl: 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit',
  },
  hcaptcha: { verifyUrl: 'https://api.hcaptcha.com/siteverify', scriptUrl: 'https://js.hcaptcha.com/1/api.js?render=explicit' },
};

/** Lead delivery by webhook (docs/decisions/0027-webhooks-outbox.md); durations in milliseconds. */
export interface WebhookConfig {
  /** Delays of the retries after the immediate first attempt. */
  retrySchedule: number[];
  timeoutMs: number;
  /** An endpoint failing with no success for this long is disabled. */
  disableAfterMs: number;
  /** Delivered and expired messages, with their deliveries and attempt log, are pruned after this. */
  retentionMs: number;
  /** http and private or loopback targets, for development and tests (in production only with its own consent). */
  allowPrivate: boolean;
  /** Whether this instance runs a delivery worker. */
  worker: boolean;
  /** Attempts in flight per instance, in total and per endpoint. */
  concurrency: number;
  endpointConcurrency: number;
  /** How often an idle worker looks for work that other instances stored. */
  pollIntervalMs: number;
  maxEndpoints: number;
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Reads and validates every setting once; a bad value throws a ConfigError naming the variable. `stdoutIsTerminal`
 * picks the default log format: readable lines for a person at a terminal, JSON for everything else.
 */
export function loadConfig(env: Env = process.env, stdoutIsTerminal = process.stdout.isTTY === true): AppConfig {
  const value = (name: string): string | undefined => {
    const raw = env[name]?.trim();
    return raw ? raw : undefined;
  };
  const port = parsePort(value('PORT'));
  const rateLimitAnonymous = parseQuota('RATE_LIMIT_ANONYMOUS', value('RATE_LIMIT_ANONYMOUS') ?? '60/60s');
  const rateLimitAgent = parseQuota('RATE_LIMIT_AGENT', value('RATE_LIMIT_AGENT') ?? '600/60s');
  // A token must be worth having (docs/decisions/0011-rate-limit-tiers.md).
  if (rateLimitAgent.limit / rateLimitAgent.windowSeconds < (10 * rateLimitAnonymous.limit) / rateLimitAnonymous.windowSeconds) {
    throw new ConfigError('RATE_LIMIT_AGENT', 'must allow at least 10 times the rate of RATE_LIMIT_ANONYMOUS');
  }
  const rateLimitAgentPerAddress = parseQuota('RATE_LIMIT_AGENT_PER_ADDRESS', value('RATE_LIMIT_AGENT_PER_ADDRESS') ?? value('RATE_LIMIT_AGENT') ?? '600/60s');
  // Below the agent rate, one registration alone could not use its own quota.
  if (rateLimitAgentPerAddress.limit / rateLimitAgentPerAddress.windowSeconds < rateLimitAgent.limit / rateLimitAgent.windowSeconds) {
    throw new ConfigError('RATE_LIMIT_AGENT_PER_ADDRESS', 'must allow at least the rate of RATE_LIMIT_AGENT');
  }
  // A claim must be worth making: a known party never gets less than an unclaimed one. Unset, it is 6000/60s, or
  // RATE_LIMIT_AGENT where that allows more (a deployment that raised the agents' quota keeps starting).
  const rate = (quota: RateLimitQuota) => quota.limit / quota.windowSeconds;
  const verifiedDefault = parseQuota('RATE_LIMIT_VERIFIED_AGENT', '6000/60s');
  const rateLimitVerifiedAgent = value('RATE_LIMIT_VERIFIED_AGENT')
    ? parseQuota('RATE_LIMIT_VERIFIED_AGENT', value('RATE_LIMIT_VERIFIED_AGENT')!)
    : rate(verifiedDefault) >= rate(rateLimitAgent)
      ? verifiedDefault
      : rateLimitAgent;
  if (rate(rateLimitVerifiedAgent) < rate(rateLimitAgent))
    throw new ConfigError('RATE_LIMIT_VERIFIED_AGENT', 'must allow at least the rate of RATE_LIMIT_AGENT');
  return Object.freeze({
    port,
    publicBaseUrl: parseBaseUrl(value('PUBLIC_BASE_URL') ?? `http://localhost:${port || 3000}`),
    dataDir: resolve(value('DATA_DIR') ?? './data'),
    databaseUrl: parseUrl('DATABASE_URL', value('DATABASE_URL'), ['postgres:', 'postgresql:']),
    redisUrl: parseUrl('REDIS_URL', value('REDIS_URL'), ['redis:', 'rediss:']),
    redisKeyPrefix: parseRedisKeyPrefix(value('REDIS_KEY_PREFIX')),
    logLevel: parseLogLevel(value('LOG_LEVEL')),
    logFormat: parseLogFormat(value('LOG_FORMAT'), stdoutIsTerminal && value('NODE_ENV') !== 'production'),
    corsOrigins: parseCorsOrigins(value('CORS_ORIGINS')),
    trustProxy: parseTrustProxy(value('TRUST_PROXY')),
    keepAliveTimeoutSeconds: parseKeepAliveTimeout(value('KEEP_ALIVE_TIMEOUT')),
    maxConnections: parseInteger('MAX_CONNECTIONS', value('MAX_CONNECTIONS'), 4096, 0, 1_000_000),
    maxConnectionsPerAddress: parseInteger('MAX_CONNECTIONS_PER_ADDRESS', value('MAX_CONNECTIONS_PER_ADDRESS'), 256, 0, 1_000_000),
    maxHeaders: parseInteger('MAX_HEADERS', value('MAX_HEADERS'), 100, 10, 1000),
    writeTimeoutSeconds: parseInteger('WRITE_TIMEOUT', value('WRITE_TIMEOUT'), 30, 1, 3600),
    ipv6PrefixLength: parseInteger('IPV6_PREFIX_LENGTH', value('IPV6_PREFIX_LENGTH'), 64, 16, 128),
    rateLimitAnonymous,
    rateLimitAgent,
    rateLimitAgentPerAddress,
    rateLimitVerifiedAgent,
    // Operators are the company's own clients (bulk imports, exports): their tier is independent of the public ones.
    rateLimitOperator: parseQuota('RATE_LIMIT_OPERATOR', value('RATE_LIMIT_OPERATOR') ?? '6000/60s'),
    rateLimitRegistration: parseQuota('RATE_LIMIT_REGISTRATION', value('RATE_LIMIT_REGISTRATION') ?? '20/3600s'),
    rateLimitToken: parseQuota('RATE_LIMIT_TOKEN', value('RATE_LIMIT_TOKEN') ?? '60/60s'),
    rateLimitMcpHousekeeping: parseQuota('RATE_LIMIT_MCP_HOUSEKEEPING', value('RATE_LIMIT_MCP_HOUSEKEEPING') ?? '600/60s'),
    // At least 64 KiB: tools/list and a lead echoed twice (the 32 KiB body limit bounds it) fit under it.
    maxAnswerBytes: parseInteger('MAX_ANSWER_BYTES', value('MAX_ANSWER_BYTES'), 1024 * 1024, 65536, 2 ** 30),
    clientSecretGraceSeconds: parseInteger('CLIENT_SECRET_GRACE', value('CLIENT_SECRET_GRACE'), 86400, 0, 30 * 86400),
    agentRefreshTokenTtlMs: parseDuration('AGENT_REFRESH_TOKEN_TTL', value('AGENT_REFRESH_TOKEN_TTL') ?? '30d', 1000, 365 * DAY_MS),
    agentRefreshGraceMs: parseDuration('AGENT_REFRESH_GRACE', value('AGENT_REFRESH_GRACE') ?? '30s', 0, 300_000),
    exportMaxConcurrent: parseInteger('EXPORT_MAX_CONCURRENT', value('EXPORT_MAX_CONCURRENT'), 2, 1, 64),
    exportPageSize: parseInteger('EXPORT_PAGE_SIZE', value('EXPORT_PAGE_SIZE'), 500, 1, 10000),
    apiDeprecations: parseDeprecations(value('API_DEPRECATIONS')),
    timeZone: parseTimeZone(value('TIME_ZONE')),
    leadRetentionDays: value('LEAD_RETENTION_DAYS') === undefined ? null : parseInteger('LEAD_RETENTION_DAYS', value('LEAD_RETENTION_DAYS'), 0, 1, 36_500),
    spamRetentionDays: parseInteger('SPAM_RETENTION_DAYS', value('SPAM_RETENTION_DAYS'), 30, 1, 36_500),
    captcha: parseCaptcha(value),
    rateLimitFormToken: parseQuota('RATE_LIMIT_FORM_TOKEN', value('RATE_LIMIT_FORM_TOKEN') ?? '60/60s'),
    screeningRules: parseScreeningRules(value('SCREENING_RULES')),
    screeningAllowDomains: parseAllowDomains(value('SCREENING_ALLOW_DOMAINS')),
    webhooks: Object.freeze({
      retrySchedule: parseDurations('WEBHOOK_RETRY_SCHEDULE', value('WEBHOOK_RETRY_SCHEDULE') ?? '5s,5m,30m,2h,5h,10h,10h'),
      timeoutMs: parseDuration('WEBHOOK_TIMEOUT', value('WEBHOOK_TIMEOUT') ?? '15s', 100, 60_000),
      disableAfterMs: parseDuration('WEBHOOK_DISABLE_AFTER', value('WEBHOOK_DISABLE_AFTER') ?? '5d', 1000, 365 * DAY_MS),
      retentionMs: parseDuration('WEBHOOK_RETENTION', value('WEBHOOK_RETENTION') ?? '30d', 1000, 3650 * DAY_MS),
      allowPrivate: parseAllowPrivate(value),
      worker: parseBoolean('WEBHOOK_WORKER', value('WEBHOOK_WORKER'), true),
      concurrency: parseInteger('WEBHOOK_CONCURRENCY', value('WEBHOOK_CONCURRENCY'), 64, 1, 1024),
      endpointConcurrency: parseInteger('WEBHOOK_ENDPOINT_CONCURRENCY', value('WEBHOOK_ENDPOINT_CONCURRENCY'), 16, 1, 1024),
      pollIntervalMs: parseDuration('WEBHOOK_POLL_INTERVAL', value('WEBHOOK_POLL_INTERVAL') ?? '1s', 10, 60_000),
      maxEndpoints: parseInteger('WEBHOOK_MAX_ENDPOINTS', value('WEBHOOK_MAX_ENDPOINTS'), 50, 1, 1000),
    }),
    mail: parseMail(value, port),
    notifyDigestAt: parseClockTime('NOTIFY_DIGEST_AT', value('NOTIFY_DIGEST_AT') ?? '08:00'),
    secretsKey: parseSecretsKey(value('SECRETS_KEY')),
    inbox: parseInbox(value),
    observability: parseObservability(value, port),
    oidc: parseOidc(value, parseBaseUrl(value('PUBLIC_BASE_URL') ?? `http://localhost:${port || 3000}`)),
    version: packageVersion(),
  });
}

function parseInbox(value: (name: string) => string | undefined): InboxConfig {
  const idleTimeoutMs = parseDuration('INBOX_IDLE_TIMEOUT', value('INBOX_IDLE_TIMEOUT') ?? '8h', 60_000, 30 * DAY_MS);
  const sessionLifetimeMs = parseDuration('INBOX_SESSION_LIFETIME', value('INBOX_SESSION_LIFETIME') ?? '7d', 60_000, 365 * DAY_MS);
  if (idleTimeoutMs > sessionLifetimeMs) throw new ConfigError('INBOX_IDLE_TIMEOUT', 'must not be longer than INBOX_SESSION_LIFETIME');
  return Object.freeze({
    idleTimeoutMs,
    sessionLifetimeMs,
    verificationMailDailyLimit: parseInteger('VERIFICATION_MAIL_DAILY_LIMIT', value('VERIFICATION_MAIL_DAILY_LIMIT'), 500, 0, 1_000_000),
  });
}

function parseOidc(value: (name: string) => string | undefined, publicBaseUrl: string): OidcConfig | null {
  const [issuer, clientId, clientSecret] = ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'].map(value);
  const only = parseBoolean('OIDC_ONLY', value('OIDC_ONLY'), false);
  if (issuer === undefined && clientId === undefined && clientSecret === undefined) {
    if (only) throw new ConfigError('OIDC_ONLY', 'needs OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET: without them nobody could sign in');
    return null;
  }
  const missing = (['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const).find((_, i) => [issuer, clientId, clientSecret][i] === undefined);
  if (missing) throw new ConfigError(missing, 'must be set with the other OIDC_ settings (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET)');
  const url = issuerUrl('OIDC_ISSUER', issuer!);
  // Over http the attempt's cookie has no __Host- prefix: a neighbour host could plant its own attempt, and sign a
  // person in as someone else.
  if (!publicBaseUrl.startsWith('https:') && !LOOPBACK_HOSTS.includes(new URL(publicBaseUrl).hostname))
    throw new ConfigError('PUBLIC_BASE_URL', 'must be https with single sign-on (OIDC_ISSUER), except on localhost');
  const domains = (value('OIDC_ALLOWED_DOMAINS') ?? '')
    .split(',')
    .map((domain) => domain.trim().toLowerCase())
    .filter(Boolean);
  for (const domain of domains)
    if (!DNS_NAME.test(domain) || !domain.includes('.'))
      throw new ConfigError('OIDC_ALLOWED_DOMAINS', `must be a comma list of domains (bad entry "${domain}")`);
  // Never admin: a domain's every address would manage the people, the clients and the secrets.
  const role = value('OIDC_DEFAULT_ROLE') ?? 'viewer';
  if (role === 'admin' || !(INBOX_ROLES as readonly string[]).includes(role)) throw new ConfigError('OIDC_DEFAULT_ROLE', 'must be viewer or marketer');
  const trusted = (value('OIDC_TRUST_EMAIL') ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of trusted) issuerUrl('OIDC_TRUST_EMAIL', entry);
  return Object.freeze({
    issuer: issuer!,
    clientId: clientId!,
    clientSecret: clientSecret!,
    name: value('OIDC_NAME') ?? url.host,
    allowedDomains: new Set(domains),
    defaultRole: role as OidcConfig['defaultRole'],
    trustEmailIssuers: new Set(trusted),
    only,
  });
}

/** Host names of this machine as a URL spells them: where http is allowed beside single sign-on. */
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/** An issuer identifier: https, or http on a loopback host (a provider on the developer's machine or in a test). */
function issuerUrl(name: string, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be an issuer URL such as https://accounts.google.com');
  }
  const loopback = LOOPBACK_HOSTS.includes(url.hostname);
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && loopback)) || url.search || url.hash)
    throw new ConfigError(name, 'must be an https issuer URL (http only on localhost) with no query or fragment');
  return url;
}

function parseObservability(value: (name: string) => string | undefined, port: number): ObservabilityConfig {
  const metricsPort = value('METRICS_PORT');
  let metrics: ObservabilityConfig['metrics'] = null;
  if (metricsPort !== undefined) {
    const n = Number(metricsPort);
    if (!/^\d+$/.test(metricsPort) || n > 65535) throw new ConfigError('METRICS_PORT', 'must be an integer from 0 to 65535');
    // Never on the public port: the metrics say how much traffic, refusals and backlog there is.
    if (n !== 0 && n === port) throw new ConfigError('METRICS_PORT', 'must differ from PORT: metrics are never served on the public port');
    const host = value('METRICS_HOST') ?? '127.0.0.1';
    if (isIP(host) === 0 && !/^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})$/.test(host)) throw new ConfigError('METRICS_HOST', 'must be an IP address or a host name');
    metrics = { port: n, host };
  }
  // The standard variables (opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/): the exporter
  // itself reads the OTLP ones (endpoint, headers, timeout, compression).
  const endpoint = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? value('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (endpoint !== undefined) parseUrl('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint, ['http:', 'https:']);
  const off = value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || value('OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none';
  const kind = (value('OTEL_TRACES_SAMPLER')?.toLowerCase() ?? 'parentbased_always_on') as TraceSampler;
  if (!TRACE_SAMPLERS.includes(kind)) throw new ConfigError('OTEL_TRACES_SAMPLER', `must be one of ${TRACE_SAMPLERS.join(', ')}`);
  const ratioRaw = value('OTEL_TRACES_SAMPLER_ARG');
  const ratio = ratioRaw === undefined ? 1 : Number(ratioRaw);
  if (!(ratio >= 0 && ratio <= 1)) throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', 'must be a number from 0 to 1');
  const propagateToWebhooks = parseBoolean('WEBHOOK_PROPAGATE_TRACE', value('WEBHOOK_PROPAGATE_TRACE'), true);
  return Object.freeze({
    metrics,
    outboxDegradedAfterMs: parseDuration('OUTBOX_DEGRADED_AFTER', value('OUTBOX_DEGRADED_AFTER') ?? '15m', 1000, 30 * DAY_MS),
    tracing:
      endpoint === undefined || off
        ? null
        : {
            sampler: { kind, ratio },
            propagateToWebhooks,
            batch: {
              scheduledDelayMillis: parseInteger('OTEL_BSP_SCHEDULE_DELAY', value('OTEL_BSP_SCHEDULE_DELAY'), 5000, 1, 3_600_000),
              maxQueueSize: parseInteger('OTEL_BSP_MAX_QUEUE_SIZE', value('OTEL_BSP_MAX_QUEUE_SIZE'), 2048, 1, 1_000_000),
              maxExportBatchSize: parseInteger('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', value('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'), 512, 1, 1_000_000),
              exportTimeoutMillis: parseInteger('OTEL_BSP_EXPORT_TIMEOUT', value('OTEL_BSP_EXPORT_TIMEOUT'), 30_000, 1, 3_600_000),
            },
          },
  });
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined) return 3000;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) throw new ConfigError('PORT', 'must be an integer from 0 to 65535');
  return port;
}

function parseBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('PUBLIC_BASE_URL', 'must be an absolute http(s) URL such as https://api.example.com');
  }
  if (!['http:', 'https:'].includes(url.protocol)) throw new ConfigError('PUBLIC_BASE_URL', 'must use http or https');
  if (raw !== url.origin) {
    throw new ConfigError('PUBLIC_BASE_URL', `must be an origin with no path, query or trailing slash (e.g. ${url.origin})`);
  }
  return url.origin;
}

function parseUrl(name: string, raw: string | undefined, protocols: string[]): string | undefined {
  if (raw === undefined) return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    // The value may hold a password, so it is never echoed.
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(protocol)) throw new ConfigError(name, `must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  return raw;
}

function parseLogLevel(raw: string | undefined): LogLevel {
  if (raw === undefined) return 'info';
  const level = raw.toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(level)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

function parseLogFormat(raw: string | undefined, readable: boolean): LogFormat {
  if (raw === undefined) return readable ? 'pretty' : 'json';
  const format = raw.toLowerCase();
  if (format !== 'json' && format !== 'pretty') throw new ConfigError('LOG_FORMAT', 'must be json or pretty');
  return format;
}

/**
 * No glob characters, so that a key pattern or ACL rule (`~leads:*`) means what it says, and a trailing colon, so that
 * `prod:*` does not also reach a `prod2:` deployment's keys. Braces stay allowed for Redis Cluster hash tags.
 */
function parseRedisKeyPrefix(raw: string | undefined): string {
  if (raw === undefined) return 'leads:';
  if (!/^[\w.{}/:-]{0,63}:$/.test(raw)) {
    throw new ConfigError('REDIS_KEY_PREFIX', 'must be 1 to 64 characters of letters, digits and _ . - / { } :, ending with ":" (for example staging:)');
  }
  return raw;
}

function parseCorsOrigins(raw: string | undefined): '*' | string[] {
  if (raw === undefined || raw === '*') return '*';
  return raw.split(',').map((item) => {
    const origin = item.trim();
    try {
      if (!origin.includes('*') && new URL(origin).origin === origin) return origin;
    } catch {
      // fall through to the error below
    }
    throw new ConfigError('CORS_ORIGINS', `must be * or a comma-separated list of origins (bad entry "${origin}")`);
  });
}

function parseTrustProxy(raw: string | undefined): false | number | string[] {
  if (raw === undefined) return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((entry) => entry.trim());
  const valid = (entry: string) => {
    if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
    const [address, prefix, extra] = entry.split('/');
    const version = isIP(address);
    const bits = version === 4 ? 32 : 128;
    return version !== 0 && extra === undefined && (prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits));
  };
  if (!entries.every(valid)) {
    throw new ConfigError('TRUST_PROXY', 'must be a hop count or a comma-separated list of addresses, CIDRs, loopback, linklocal or uniquelocal');
  }
  return entries;
}

function parseKeepAliveTimeout(raw: string | undefined): number {
  if (raw === undefined) return 5;
  const seconds = Number(raw);
  if (!/^\d+$/.test(raw) || seconds < 1 || seconds > 3600) throw new ConfigError('KEEP_ALIVE_TIMEOUT', 'must be a whole number of seconds from 1 to 3600');
  return seconds;
}

function parseTimeZone(raw: string | undefined): string {
  if (raw === undefined) return 'America/Sao_Paulo';
  const zone = knownTimeZone(raw);
  if (!zone) throw new ConfigError('TIME_ZONE', `must be an IANA time zone name such as America/Sao_Paulo, Europe/Lisbon or UTC (not "${raw}")`);
  return zone;
}

function parseInteger(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new ConfigError(name, `must be a whole number from ${min} to ${max}`);
  return n;
}

const DAY_MS = 86_400_000;
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: DAY_MS };

/** `<n>ms|s|m|h|d`, from `min` to `max` milliseconds. */
function parseDuration(name: string, raw: string, min: number, max: number): number {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(raw);
  const ms = match ? Number(match[1]) * DURATION_UNITS[match[2]] : NaN;
  if (!(ms >= min && ms <= max)) throw new ConfigError(name, `must be a duration such as 15s, 5m, 2h or 5d, from ${min} ms to ${max / 1000} s`);
  return ms;
}

/** A comma-separated list of 0 to 20 durations, each up to 30 days (`none` for no retries). */
function parseDurations(name: string, raw: string): number[] {
  if (raw === 'none') return [];
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.length > 20) throw new ConfigError(name, 'may list at most 20 delays');
  return parts.map((part) => parseDuration(name, part, 0, 30 * DAY_MS));
}

/** An address as a mail header takes it: `local@domain`, no spaces, angle brackets or line breaks. */
const MAIL_ADDRESS = /^[^\s<>@",;:]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
/** A display name that no mail client reads as more addresses: no quotes, brackets, @, commas or semicolons. */
const DISPLAY_NAME = /^[^\p{Cc}"<>@,;:\\]+$/u;
/** A DNS name of labels (DKIM_DOMAIN, and DKIM_SELECTOR's one or more labels). */
const DNS_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?)*$/;

function parseMail(value: (name: string) => string | undefined, port: number): Readonly<MailConfig> {
  const smtpUrl = parseUrl('SMTP_URL', value('SMTP_URL'), ['smtp:', 'smtps:']) ?? null;
  const smtpUser = value('SMTP_USER') ?? null;
  const smtpPassword = value('SMTP_PASSWORD') ?? null;
  if (smtpUrl !== null) {
    const url = new URL(smtpUrl);
    // Nodemailer would read a query as transport options; this service sets those itself (src/mail/smtp-mailer.ts).
    if (url.search || url.hash || (url.pathname && url.pathname !== '/'))
      throw new ConfigError('SMTP_URL', 'takes a host, a port and credentials only: no path or query');
    if (!url.hostname) throw new ConfigError('SMTP_URL', 'must name a host');
    if ((url.username || url.password) && (smtpUser !== null || smtpPassword !== null)) {
      throw new ConfigError('SMTP_USER', 'credentials go either in SMTP_URL or in SMTP_USER and SMTP_PASSWORD, not both');
    }
  } else if (smtpUser !== null || smtpPassword !== null) {
    throw new ConfigError('SMTP_USER', 'SMTP_USER and SMTP_PASSWORD are for the server of SMTP_URL, which is not set');
  }
  if ((smtpUser === null) !== (smtpPassword === null)) throw new ConfigError('SMTP_USER', 'SMTP_USER and SMTP_PASSWORD go together: set both or neither');
  const host = new URL(value('PUBLIC_BASE_URL') ?? `http://localhost:${port || 3000}`).hostname;
  // An IP address or a single label (localhost) is no mail domain.
  const from = value('MAIL_FROM') ?? `leads@${host.includes('.') && isIP(host.replace(/^\[|\]$/g, '')) === 0 ? host : 'localhost.localdomain'}`;
  const named = /^([^<>]*)<([^<>]*)>$/.exec(from);
  const fromAddress = named ? named[2] : from;
  const fromName = named?.[1].trim() || null;
  if (!MAIL_ADDRESS.test(fromAddress) || (fromName !== null && !DISPLAY_NAME.test(fromName))) {
    throw new ConfigError('MAIL_FROM', 'must be an e-mail address, alone or as Name <address> (a name without quotes, @, commas, semicolons or brackets)');
  }
  const mailto = value('MAIL_UNSUBSCRIBE_MAILTO') ?? null;
  if (mailto !== null && !MAIL_ADDRESS.test(mailto)) throw new ConfigError('MAIL_UNSUBSCRIBE_MAILTO', 'must be an e-mail address');
  return Object.freeze({
    smtpUrl,
    smtpUser,
    smtpPassword,
    requireTls: parseBoolean('SMTP_REQUIRE_TLS', value('SMTP_REQUIRE_TLS'), false),
    from,
    fromAddress,
    fromName,
    unsubscribeMailto: mailto,
    dkim: parseDkim(value),
    retrySchedule: parseDurations('EMAIL_RETRY_SCHEDULE', value('EMAIL_RETRY_SCHEDULE') ?? '5s,20s,1m,5m,30m,2h,6h'),
    production: value('NODE_ENV') === 'production',
  });
}

/** DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY: all three or none; an RSA key, which Nodemailer's signer takes. */
function parseDkim(value: (name: string) => string | undefined): MailConfig['dkim'] {
  const [domain, selector, pem] = [value('DKIM_DOMAIN'), value('DKIM_SELECTOR'), value('DKIM_PRIVATE_KEY')];
  if (domain === undefined && selector === undefined && pem === undefined) return null;
  if (domain === undefined || selector === undefined || pem === undefined) {
    throw new ConfigError('DKIM_DOMAIN', 'DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY go together: set all three or none');
  }
  if (!DNS_NAME.test(domain) || !domain.includes('.')) throw new ConfigError('DKIM_DOMAIN', 'must be a domain name such as example.com');
  if (!DNS_NAME.test(selector)) throw new ConfigError('DKIM_SELECTOR', 'must be a DNS label such as mail or leads2026');
  // A PEM key in one environment line may carry its line breaks as \n.
  const privateKey = pem.replaceAll('\\n', '\n');
  let key;
  try {
    key = createPrivateKey(privateKey);
  } catch {
    throw new ConfigError('DKIM_PRIVATE_KEY', 'must be a PEM private key');
  }
  // Nodemailer signs rsa-sha256 only: an Ed25519 key would send every message unsigned.
  if (key.asymmetricKeyType !== 'rsa' || (key.asymmetricKeyDetails?.modulusLength ?? 0) < 1024) {
    throw new ConfigError('DKIM_PRIVATE_KEY', 'must be an RSA private key of at least 1024 bits (2048 recommended)');
  }
  return Object.freeze({ domain, selector, privateKey });
}

function parseClockTime(name: string, raw: string): { hour: number; minute: number } {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(raw);
  if (!match) throw new ConfigError(name, 'must be a time of day as HH:MM, such as 08:00');
  return Object.freeze({ hour: Number(match[1]), minute: Number(match[2]) });
}

function parseBoolean(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, 'must be true or false');
}

/** The webhooks' SSRF guard off (http, private and loopback targets): for development and tests; production only by name. */
function parseAllowPrivate(value: (name: string) => string | undefined): boolean {
  const allowPrivate = parseBoolean('WEBHOOKS_ALLOW_PRIVATE', value('WEBHOOKS_ALLOW_PRIVATE'), false);
  const accepted = parseBoolean('WEBHOOKS_ALLOW_PRIVATE_IN_PRODUCTION', value('WEBHOOKS_ALLOW_PRIVATE_IN_PRODUCTION'), false);
  if (allowPrivate && value('NODE_ENV') === 'production' && !accepted) {
    throw new ConfigError(
      'WEBHOOKS_ALLOW_PRIVATE',
      'is true with NODE_ENV=production: webhooks could then reach private and loopback addresses (the SSRF guard is off). Unset it, or set WEBHOOKS_ALLOW_PRIVATE_IN_PRODUCTION=true to accept the risk',
    );
  }
  return allowPrivate;
}

function parseCaptcha(value: (name: string) => string | undefined): CaptchaConfig | null {
  const provider = value('CAPTCHA_PROVIDER');
  const rest = ['CAPTCHA_SECRET', 'CAPTCHA_SITE_KEY', 'CAPTCHA_VERIFY_URL', 'CAPTCHA_SCRIPT_URL'].filter((name) => value(name) !== undefined);
  if (provider === undefined) {
    if (rest.length > 0) throw new ConfigError(rest[0], 'needs CAPTCHA_PROVIDER (turnstile or hcaptcha)');
    return null;
  }
  if (provider !== 'turnstile' && provider !== 'hcaptcha') throw new ConfigError('CAPTCHA_PROVIDER', 'must be turnstile or hcaptcha');
  const required = (name: string) => {
    const raw = value(name);
    if (raw === undefined || raw.trim() === '') throw new ConfigError(name, `is required with CAPTCHA_PROVIDER=${provider}`);
    return raw.trim();
  };
  const url = (name: string, fallback: string) => parseUrl(name, value(name), ['http:', 'https:']) ?? fallback;
  return Object.freeze({
    provider,
    secret: required('CAPTCHA_SECRET'),
    siteKey: required('CAPTCHA_SITE_KEY'),
    verifyUrl: url('CAPTCHA_VERIFY_URL', CAPTCHA_DEFAULTS[provider].verifyUrl),
    scriptUrl: url('CAPTCHA_SCRIPT_URL', CAPTCHA_DEFAULTS[provider].scriptUrl),
  });
}

/** A comma list of rule names, each once; `all` (the default) or `none` for every rule or none. */
function parseScreeningRules(raw: string | undefined): ReadonlySet<ScreeningRule> {
  if (raw === undefined || raw === 'all') return new Set(SCREENING_RULE_NAMES);
  if (raw === 'none') return new Set();
  const rules = new Set<ScreeningRule>();
  for (const item of raw.split(',')) {
    const name = item.trim();
    if (!(SCREENING_RULE_NAMES as readonly string[]).includes(name)) {
      throw new ConfigError('SCREENING_RULES', `must be all, none or a comma-separated list of ${SCREENING_RULE_NAMES.join(', ')} (bad entry "${name}")`);
    }
    if (rules.has(name as ScreeningRule)) throw new ConfigError('SCREENING_RULES', `lists ${name} twice`);
    rules.add(name as ScreeningRule);
  }
  return rules;
}

/** Bare domain names (`example.com.br`), compared with an address's domain as the lead stores it: lower case. */
function parseAllowDomains(raw: string | undefined): ReadonlySet<string> {
  if (raw === undefined) return new Set();
  return new Set(
    raw.split(',').map((item) => {
      const domain = item.trim().toLowerCase();
      if (!/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/.test(domain)) {
        throw new ConfigError('SCREENING_ALLOW_DOMAINS', `must be a comma-separated list of domain names such as example.com.br (bad entry "${item.trim()}")`);
      }
      return domain;
    }),
  );
}

function parseQuota(name: string, raw: string): RateLimitQuota {
  const match = /^(\d+)\/(\d+)s$/.exec(raw);
  const limit = Number(match?.[1]);
  const windowSeconds = Number(match?.[2]);
  if (!match || limit < 1 || windowSeconds < 1) throw new ConfigError(name, 'must look like <count>/<seconds>s, e.g. 60/60s');
  return { limit, windowSeconds };
}

function parseDeprecations(raw: string | undefined): ApiDeprecation[] {
  if (raw === undefined) return [];
  const fail = (problem: string): never => {
    throw new ConfigError('API_DEPRECATIONS', problem);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    fail('must be a JSON array');
  }
  if (!Array.isArray(parsed)) fail('must be a JSON array');
  return (parsed as unknown[]).map((entry, index) => {
    const at = `entry ${index}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return fail(`${at} must be an object`);
    const { path, deprecation, sunset, link, ...rest } = entry as Record<string, unknown>;
    if (Object.keys(rest).length) fail(`${at} has unknown keys: ${Object.keys(rest).join(', ')}`);
    if (typeof path !== 'string' || !path.startsWith('/')) fail(`${at}.path must be a route prefix starting with /`);
    const when = (name: string, v: unknown): Date => {
      const date = typeof v === 'string' && RFC3339.test(v) ? new Date(v) : undefined;
      return date && !Number.isNaN(date.getTime()) ? date : fail(`${at}.${name} must be an RFC 3339 date-time`);
    };
    const result: ApiDeprecation = { path: path as string, deprecation: when('deprecation', deprecation) };
    if (sunset !== undefined) {
      result.sunset = when('sunset', sunset);
      if (result.sunset < result.deprecation) fail(`${at}.sunset must not be earlier than its deprecation`);
    }
    if (link !== undefined) {
      if (typeof link !== 'string' || !/^https?:\/\//.test(link)) fail(`${at}.link must be an http(s) URL`);
      result.link = link as string;
    }
    return result;
  });
}

/** 32 bytes as base64 or base64url (43 or 44 characters) or hex (64); the value is never echoed. */
function parseSecretsKey(raw: string | undefined): Buffer | undefined {
  if (raw === undefined) return undefined;
  let key: Buffer | undefined;
  if (/^[\da-f]{64}$/i.test(raw)) key = Buffer.from(raw, 'hex');
  else if (/^[\w+/-]{43}=?$/.test(raw) && !(/[+/]/.test(raw) && /[-_]/.test(raw)))
    key = Buffer.from(
      raw.replace(/[-_]/g, (c) => (c === '-' ? '+' : '/')),
      'base64',
    );
  if (key?.length !== 32) throw new ConfigError('SECRETS_KEY', 'must be 32 bytes as base64 (44 characters) or hex (64), e.g. from `openssl rand -base64 32`');
  return key;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string };
  return pkg.version;
}
