import { Logger } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { within } from '../time/within.js';

/**
 * The service's Prometheus metrics (docs/decisions/0042-observability.md). Their names and labels are a contract that
 * the alert rules (deploy/prometheus/) and the dashboard (deploy/grafana/) rely on. Every label value comes from a
 * closed list (a route template, a problem code, a rate-limit tier, a channel name): no address, id or raw path can
 * become a series.
 */
export class Metrics {
  readonly registry = new Registry();

  /** The semantic conventions' advice (opentelemetry.io/docs/specs/semconv/http/http-metrics/), in seconds. */
  readonly httpDuration = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP server requests, from the first byte read to the last byte written.',
    labelNames: ['http_request_method', 'http_route', 'http_response_status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
    registers: [this.registry],
  });
  readonly leadsReceived = new Counter({
    name: 'leads_received_total',
    help: 'Leads stored, by the surface they came through and their screening verdict.',
    labelNames: ['lead_channel', 'verdict'] as const,
    registers: [this.registry],
  });
  readonly leadsRefused = new Counter({
    name: 'leads_refused_total',
    help: 'Lead submissions answered with a problem instead of being stored, by problem code.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  readonly outboxPending = new Gauge({
    name: 'outbox_pending',
    help: 'Outbox deliveries of enabled subscribers waiting for a first attempt or a retry (the whole database, not this instance).',
    labelNames: ['channel'] as const,
    registers: [this.registry],
  });
  readonly outboxOldestPendingAge = new Gauge({
    name: 'outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest pending delivery of an enabled subscriber, 0 when none is pending.',
    labelNames: ['channel'] as const,
    registers: [this.registry],
  });
  readonly outboxDeliveries = new Counter({
    name: 'outbox_deliveries_total',
    help: 'Outbox delivery attempts and cancellations on this instance: success, retry (failed, tried again), failed (for good), cancelled.',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly outboxDeliveryDuration = new Histogram({
    name: 'outbox_delivery_duration_seconds',
    help: "Time from a message's commit to its receiver's success, retries included.",
    labelNames: ['channel'] as const,
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 7200, 21600, 86400],
    registers: [this.registry],
  });
  readonly rateLimitRefusals = new Counter({
    name: 'rate_limit_refusals_total',
    help: 'Requests refused with 429, by the rate-limit tier whose quota was used up.',
    labelNames: ['tier'] as const,
    registers: [this.registry],
  });
  readonly authFailures = new Counter({
    name: 'auth_failures_total',
    help: 'Failed authentications, by kind: a bearer token, a client secret, a grant, a scope, a one-time code.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly exportsRunning = new Gauge({
    name: 'exports_running',
    help: 'Lead exports streaming on this instance.',
    registers: [this.registry],
  });
  readonly dataSubjectRequestsOpen = new Gauge({
    name: 'data_subject_requests_open',
    help: 'Data-subject requests verified and not completed (the whole database).',
    registers: [this.registry],
  });
  readonly dataSubjectRequestsOldestAge = new Gauge({
    name: 'data_subject_requests_oldest_open_age_seconds',
    help: 'Age of the oldest open data-subject request since its verification, 0 when none is open.',
    registers: [this.registry],
  });
  readonly dataSubjectRequestsNextDue = new Gauge({
    name: 'data_subject_requests_next_due_seconds',
    help: 'Seconds until the earliest due date of an open data-subject request, negative once overdue, 0 when none is open.',
    registers: [this.registry],
  });

  private readonly logger = new Logger('Metrics');
  private readonly scrapeHooks: { name: string; refresh: () => Promise<void>; failed: () => void }[] = [];
  private lastFailureLog = 0;

  /** `node`: Node's own metrics (event-loop delay, heap, GC), which cost a sampler and an observer: only when scraped. */
  constructor(node: boolean) {
    if (node) {
      collectDefaultMetrics({ register: this.registry, gcDurationBuckets: [0.001, 0.01, 0.1, 1, 2, 5] });
      // Gauges named like counters, which `promtool check metrics` refuses; the same counts by type stay (nodejs_active_*).
      for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
        if (!this.registry.getSingleMetric(name)) throw new Error(`metrics: prom-client no longer registers ${name}; see src/telemetry/metrics.ts`);
        this.registry.removeSingleMetric(name);
      }
    }
    // Every combination known in advance starts at 0, so that rate() sees the first lead of each kind.
    for (const lead_channel of LEAD_CHANNEL_LABELS) for (const verdict of VERDICT_LABELS) this.leadsReceived.inc({ lead_channel, verdict }, 0);
  }

  /** A channel's delivery outcomes, each at 0 from the start (Outbox.register). */
  channelRegistered(channel: string): void {
    for (const outcome of ['success', 'retry', 'failed', 'cancelled']) this.outboxDeliveries.inc({ channel, outcome }, 0);
    this.outboxDeliveryDuration.zero({ channel });
  }

  /**
   * Gauges read from the database when Prometheus scrapes (a backlog, the open requests), rather than on a timer; on
   * failure `failed` drops or zeroes them, so that a stale value never looks current.
   */
  onScrape(name: string, refresh: () => Promise<void>, failed: () => void): void {
    this.scrapeHooks.push({ name, refresh, failed });
  }

  /** The exposition in Prometheus' text format 0.0.4; each database read is bounded, so that a scrape always answers. */
  async exposition(timeoutMs = 3000): Promise<string> {
    await Promise.all(
      this.scrapeHooks.map(async (hook) => {
        try {
          await within(hook.refresh(), timeoutMs, hook.name);
        } catch (error) {
          hook.failed();
          if (Date.now() - this.lastFailureLog > 60_000) {
            this.lastFailureLog = Date.now();
            this.logger.warn({ gauge: hook.name, error: (error as Error).message }, 'metrics: a gauge could not be read');
          }
        }
      }),
    );
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** The label values of leads_received_total (src/leads/lead-channel.ts, src/screening/screening.ts); checked by its spec. */
export const LEAD_CHANNEL_LABELS = ['api', 'form', 'mcp', 'cli'] as const;
export const VERDICT_LABELS = ['accepted', 'held', 'spam'] as const;

/** HTTP methods as the conventions list them; any other is `_OTHER`, so that a made-up method is not a series. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

export function methodLabel(method: string | undefined): string {
  return method !== undefined && METHODS.has(method) ? method : '_OTHER';
}

/** What a failed authentication is, by the problem code that answered it; codes not listed are not authentication. */
export const AUTH_FAILURE_KINDS: Readonly<Record<string, string>> = {
  invalid_token: 'invalid_token',
  download_token_invalid: 'invalid_token',
  invalid_client: 'invalid_client',
  invalid_grant: 'invalid_grant',
  invalid_refresh_token: 'invalid_grant',
  invalid_claim_token: 'invalid_grant',
  insufficient_scope: 'insufficient_scope',
};
