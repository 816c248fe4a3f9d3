import { performance } from 'node:perf_hooks';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import { methodLabel, type Metrics } from './metrics.js';
import type { Tracing } from './tracing.js';

/**
 * The route template Express matched (`/api/v1/leads/:id`), never the raw path; undefined when none matched. Routes are
 * registered on the application itself: under a mounted router `req.baseUrl` would be the client's own text.
 */
function routeOf(req: Request): string | undefined {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' && req.baseUrl === '' ? path : undefined;
}

/**
 * Each request's duration (http_server_request_duration_seconds) and, with tracing on, its server span: continued from
 * an incoming `traceparent`, named by method and route, and active for everything the request does (its statements,
 * its log lines). The first middleware, so that it times the whole request; null when both are off.
 */
export function httpTelemetry(metrics: Metrics | null, tracing: Tracing | null) {
  if (!metrics && !tracing) return null;
  return (req: Request & { id?: string }, res: Response, next: NextFunction): void => {
    const start = performance.now();
    const method = methodLabel(req.method);
    const parent = tracing ? propagation.extract(ROOT_CONTEXT, req.headers) : undefined;
    const span = tracing?.tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
    res.once('close', () => {
      const route = routeOf(req);
      if (metrics) {
        const labels: Record<string, string | number> = { http_request_method: method, http_response_status_code: res.statusCode };
        if (route !== undefined) labels.http_route = route;
        metrics.httpDuration.observe(labels, (performance.now() - start) / 1000);
      }
      if (span) {
        if (route !== undefined) {
          span.updateName(`${method} ${route}`);
          span.setAttribute('http.route', route);
        }
        span.setAttribute('http.response.status_code', res.statusCode);
        if (req.id) span.setAttribute('http.request.id', req.id);
        if (res.statusCode >= 500 || !res.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
    });
    if (span) context.with(trace.setSpan(parent!, span), next);
    else next();
  };
}
