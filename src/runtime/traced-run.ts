/**
 * Runs a start or a resume under a RunTracing when the caller gave a tracer, and plainly
 * otherwise: OpenTelemetry is loaded only then.
 */
import type { Context, Tracer } from '@opentelemetry/api';
import type { RunTracing } from '../telemetry/run-tracing.ts';
import { type RunEvent, type RunObserver, UNWATCHED } from '../core/run-events.ts';

/** The tracer the run is traced into, whether it exports content, and the Context it hangs under. */
export interface TracingOptions {
  tracer?: Tracer | undefined;
  traceContent?: boolean | undefined;
  /** The OpenTelemetry Context the run hangs under instead of the active one. */
  traceParent?: Context | undefined;
}

export async function tracedRun<T>(
  given: TracingOptions,
  session: 'start' | 'resume',
  command: string,
  body: (tracing: RunTracing | null) => Promise<T>,
): Promise<T> {
  if (!given.tracer) return body(null);
  const { RunTracing } = await import('../telemetry/run-tracing.ts');
  const parent = given.traceParent;
  const tracing = new RunTracing(given.tracer, { content: given.traceContent === true, command, session, ...(parent ? { parent } : {}) });
  let result: T;
  try {
    result = await body(tracing);
  } catch (error) {
    tracing.end(error);
    throw error;
  }
  tracing.end(null);
  return result;
}

/** The caller's observer, then the tracing's. */
export function withTracing(observer: RunObserver | undefined, tracing: RunTracing | null): RunObserver {
  if (!tracing) return observer ?? UNWATCHED;
  if (!observer) return tracing.observer;
  return (event: RunEvent) => {
    observer(event);
    tracing.observer(event);
  };
}
