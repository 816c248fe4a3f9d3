import { trace } from '@opentelemetry/api';

/** The trace and span ids of the active span, for log lines; undefined outside one (or with tracing off). */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** The active span as a W3C traceparent (version 00), sampled or not, or null outside a span: what a message keeps. */
export function activeTraceParent(): string | null {
  const span = trace.getActiveSpan();
  if (!span) return null;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}
