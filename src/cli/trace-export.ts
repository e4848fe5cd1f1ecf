/**
 * The command line's traces: exported over OTLP/HTTP when the standard variables ask for it,
 * and nothing loaded otherwise (see otlpTracesWanted).
 */
import { checkOtlpProtocol, otlpTracesWanted } from '../telemetry/otlp-env.ts';
import type { TraceExport } from '../telemetry/otlp-export.ts';
import { packageVersion } from '../util/package-version.ts';

export type { TraceExport } from '../telemetry/otlp-export.ts';

export async function openTraceExport(env: NodeJS.ProcessEnv, content: boolean): Promise<TraceExport | null> {
  if (!otlpTracesWanted(env)) return null;
  checkOtlpProtocol(env);
  const { startTraceExport } = await import('../telemetry/otlp-export.ts');
  return startTraceExport({ content, serviceVersion: packageVersion() });
}

/** The run options that send a run's spans to the export. */
export function traceOptions(traces: TraceExport | null): { tracer?: TraceExport['tracer']; traceContent?: boolean } {
  return traces ? { tracer: traces.tracer, traceContent: traces.content } : {};
}
