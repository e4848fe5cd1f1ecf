/** OpenTelemetry: what the exported traces carry (they are exported when OTEL_EXPORTER_OTLP_ENDPOINT is set). */
import { option } from './option.ts';

export const traceContent = option({
  key: 'traceContent',
  type: 'boolean',
  help: 'with OTEL_EXPORTER_OTLP_ENDPOINT set: the traces carry messages, tool inputs and results too (API keys are taken out)',
  api: 'RunParts.traceContent',
  aliases: [{ flag: 'otel-content' }],
});
