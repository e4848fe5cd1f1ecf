/**
 * Runs a start or a resume under a RunTracing when the caller gave a tracer, and plainly
 * otherwise: OpenTelemetry is loaded only then.
 */
import type { Context, Tracer } from '@opentelemetry/api';
import type { RunTracing } from '../telemetry/run-tracing.ts';
import type { RunEvent, RunObserver } from '../core/run-events.ts';

export interface TracingOptions {
  tracer?: Tracer | undefined;
  traceContent?: boolean | undefined;
  command?: string | undefined;
  /** The OpenTelemetry Context the run hangs under instead of the active one. */
  traceParent?: Context | undefined;
}

export async function tracedRun<T>(
  options: TracingOptions,
  session: 'start' | 'resume',
  command: string,
  body: (tracing: RunTracing | null) => Promise<T>,
): Promise<T> {
  if (!options.tracer) return body(null);
  const { RunTracing } = await import('../telemetry/run-tracing.ts');
  const parent = options.traceParent;
  const tracing = new RunTracing(options.tracer, { content: options.traceContent === true, command, session, ...(parent ? { parent } : {}) });
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
  if (!tracing) return observer ?? (() => {});
  if (!observer) return tracing.observer;
  return (event: RunEvent) => {
    observer(event);
    tracing.observer(event);
  };
}
