/**
 * A span's place in its trace as a W3C `traceparent` value (version 00), and back: how a run
 * queued by a call (a fleet's sub-agent child, driven by another worker process) hangs its trace
 * under the call's execute_tool span although the two never share a process.
 */
import { type Context, ROOT_CONTEXT, trace } from '@opentelemetry/api';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The traceparent of the span active in `context`; null when it has none (or an invalid one). */
export function traceParentOf(context: Context): string | null {
  const span = trace.getSpanContext(context);
  if (!span || !trace.isSpanContextValid(span)) return null;
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A context whose (remote) parent span is the one `value` names; null for a value that is not a traceparent. */
export function contextOfTraceParent(value: string): Context | null {
  const match = TRACEPARENT.exec(value);
  if (!match) return null;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  const span = { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
  return trace.isSpanContextValid(span) ? trace.setSpanContext(ROOT_CONTEXT, span) : null;
}
