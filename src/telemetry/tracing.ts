import { context, propagation, type Span, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { TracingConfig } from '../config/config.js';

/** The instrumentation scope of every span the service makes. */
export const TRACER_NAME = 'leads-service';

/**
 * Traces over OTLP/HTTP (docs/decisions/0042-observability.md). The release build is one bundle loaded through
 * vm.Script, out of reach of OpenTelemetry's module patching, so the spans are the service's own: requests
 * (http-telemetry.ts), database statements (here, at the drivers: pg's Client.query, better-sqlite3's Statement) and
 * outbox deliveries (the worker). Started only when an OTLP endpoint is set: otherwise nothing here is loaded into the
 * request path, and the API's no-op tracer answers the worker.
 */
export class Tracing {
  private constructor(
    readonly tracer: Tracer,
    private readonly provider: TracerProvider,
    readonly propagateToWebhooks: boolean,
  ) {}

  /** Installs the global context manager, propagator and provider, and wraps the database drivers. */
  static start(config: TracingConfig, version: string): Tracing {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the defaults (envDetector); the exporter reads the
    // OTEL_EXPORTER_OTLP_* variables itself.
    const resource = resourceFromAttributes({ 'service.name': TRACER_NAME, 'service.version': version }).merge(detectResources({ detectors: [envDetector] }));
    const provider = new TracerProvider({
      resource,
      sampler: samplerOf(config.sampler),
      spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...config.batch })],
    });
    trace.setGlobalTracerProvider(provider);
    const tracer = provider.getTracer(TRACER_NAME, version);
    instrumentDatabaseDrivers(tracer);
    return new Tracing(tracer, provider, config.propagateToWebhooks);
  }

  /** Sends the spans still buffered (a stop): the last requests' spans are not lost. */
  async shutdown(): Promise<void> {
    await this.provider.shutdown().catch(() => undefined);
  }
}

/**
 * The sampler OTEL_TRACES_SAMPLER names, but a caller's sampled flag decides nothing: a `traceparent` from the public
 * internet could otherwise force every one of its requests to be traced (a span per statement, the exporter's queue
 * filled). Its trace id is continued; whether the trace is kept is this service's choice (the root sampler), and a
 * local child follows its parent.
 */
function samplerOf({ kind, ratio }: TracingConfig['sampler']): Sampler {
  const base = kind.replace('parentbased_', '');
  const root = base === 'always_off' ? new AlwaysOffSampler() : base === 'traceidratio' ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOnSampler();
  return kind.startsWith('parentbased_') ? new ParentBasedSampler({ root, remoteParentSampled: root, remoteParentNotSampled: root }) : root;
}

/** The longest statement text a span keeps. Statements carry placeholders: their values never reach a span. */
const STATEMENT_TEXT_MAX = 2000;

/** A statement's span, a child of the active one (a request's, a delivery's); none for the worker's own polling. */
function statementSpan(tracer: Tracer, system: 'postgresql' | 'sqlite', sql: unknown): Span | undefined {
  if (trace.getActiveSpan() === undefined || typeof sql !== 'string') return undefined;
  const operation = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'QUERY';
  return tracer.startSpan(operation, {
    kind: SpanKind.CLIENT,
    attributes: { 'db.system.name': system, 'db.operation.name': operation, 'db.query.text': sql.slice(0, STATEMENT_TEXT_MAX) },
  });
}

function endSpan(span: Span, error?: unknown): void {
  if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: (error as { code?: string }).code ?? 'error' });
  span.end();
}

/**
 * Wraps the two drivers' statement methods, once. They are the only ways a statement reaches a database here (TypeORM
 * and StepTransactions both end in them), so every statement of a traced request gets its span. A driver upgrade that
 * renames them stops the start, rather than silently losing the spans.
 */
function instrumentDatabaseDrivers(tracer: Tracer): void {
  const pgClient = pg.Client.prototype as unknown as Record<string, unknown> & { query: (...args: unknown[]) => unknown };
  if (typeof pgClient.query !== 'function') throw new Error('tracing: pg.Client.prototype.query is gone; src/telemetry/tracing.ts needs updating');
  if (!(pgClient.query as { traced?: boolean }).traced) {
    const original = pgClient.query;
    const traced = function (this: unknown, ...args: unknown[]): unknown {
      const first = args[0] as string | { text?: unknown } | undefined;
      const span = statementSpan(tracer, 'postgresql', typeof first === 'string' ? first : first?.text);
      if (!span) return original.apply(this, args);
      const last = args.length - 1;
      if (typeof args[last] === 'function') {
        const callback = args[last] as (error: unknown, result: unknown) => void;
        args[last] = (error: unknown, result: unknown) => {
          endSpan(span, error);
          callback(error, result);
        };
        try {
          return original.apply(this, args);
        } catch (error) {
          endSpan(span, error);
          throw error;
        }
      }
      let result: unknown;
      try {
        result = original.apply(this, args);
      } catch (error) {
        endSpan(span, error);
        throw error;
      }
      if (result && typeof (result as Promise<unknown>).then === 'function') {
        return (result as Promise<unknown>).then(
          (value) => (endSpan(span), value),
          (error: unknown) => {
            endSpan(span, error);
            throw error;
          },
        );
      }
      endSpan(span);
      return result;
    };
    pgClient.query = Object.assign(traced, { traced: true });
  }
  // Its Statement class is not exported: it is reached through a statement.
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, unknown>;
  probe.close();
  for (const method of ['run', 'get', 'all'] as const) {
    const original = statement[method] as ((...args: unknown[]) => unknown) & { traced?: boolean };
    if (typeof original !== 'function') throw new Error(`tracing: better-sqlite3's Statement.${method} is gone; src/telemetry/tracing.ts needs updating`);
    if (original.traced) continue;
    statement[method] = Object.assign(
      function (this: { source?: string }, ...args: unknown[]): unknown {
        const span = statementSpan(tracer, 'sqlite', this.source);
        if (!span) return original.apply(this, args);
        try {
          const result = original.apply(this, args);
          endSpan(span);
          return result;
        } catch (error) {
          endSpan(span, error);
          throw error;
        }
      },
      { traced: true },
    );
  }
}
