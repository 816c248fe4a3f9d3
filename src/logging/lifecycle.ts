import type { AppConfig } from '../config/config.js';
import { sqliteFile } from '../database/data-source.js';

/**
 * The one line a start writes at info: where the service answers, which database and which Redis it uses, and where
 * e-mail goes (the Mailer's destination: an SMTP server, or the folder of .eml files). Connection URLs are shown by
 * host, port and database only: their user, password and query (which may carry a password) never.
 */
export function startLine(config: AppConfig, port: number, mailDestination?: string, metricsAddress?: { host: string; port: number }): string {
  const local = `http://localhost:${port}`;
  const address = config.publicBaseUrl === local ? local : `${local} (public URL ${config.publicBaseUrl})`;
  const database = config.databaseUrl ? `PostgreSQL ${hostAndPath(config.databaseUrl)}` : `SQLite ${sqliteFile(config)}`;
  const redis = config.redisUrl ? `${hostAndPath(config.redisUrl)}, keys under "${config.redisKeyPrefix}"` : 'not used, rate limits per instance';
  const mail =
    mailDestination === undefined
      ? ''
      : `; mail: ${/^smtps?:/.test(mailDestination) ? mailDestination : `.eml files in ${mailDestination} (SMTP_URL not set)`}`;
  const metrics = metricsAddress
    ? `; metrics: http://${metricsAddress.host.includes(':') ? `[${metricsAddress.host}]` : metricsAddress.host}:${metricsAddress.port}/metrics`
    : '';
  const traces = config.observability.tracing ? '; traces: OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT)' : '';
  return `Leads API ${config.version} (Node.js ${process.version}) listening on ${address}; database: ${database}; Redis: ${redis}${mail}${metrics}${traces}`;
}

/** The one line a graceful stop writes, once the server, Redis and the database are closed. */
export function stopLine(signal: string, milliseconds: number): string {
  return `Stopped on ${signal} in ${Math.round(milliseconds)} ms: requests in flight answered, connections closed`;
}

function hostAndPath(url: string): string {
  const { hostname, port, pathname } = new URL(url);
  return `${hostname || 'localhost'}${port ? `:${port}` : ''}${pathname === '/' ? '' : decodeURIComponent(pathname)}`;
}
