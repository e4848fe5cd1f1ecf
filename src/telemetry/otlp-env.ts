/**
 * Whether the command line exports traces: the standard OpenTelemetry variables decide, read
 * here without loading anything (the SDK is loaded only when they ask for it).
 */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** True when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set and the SDK is not disabled. */
export function otlpTracesWanted(env: NodeJS.ProcessEnv): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** The protocols this exporter speaks: OTLP over HTTP (it sends JSON, which every OTLP/HTTP receiver accepts). */
const HTTP_PROTOCOLS = new Set(['http/json', 'http/protobuf']);

/**
 * Traces were asked for over a protocol this exporter does not speak (gRPC): refused before
 * anything runs, rather than sending to a port that cannot answer and losing every span.
 */
export class OtlpProtocolError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'OtlpProtocolError';
  constructor(
    readonly variable: string,
    readonly protocol: string,
  ) {
    super(
      `${variable}=${protocol}: durable-agent exports traces over OTLP/HTTP only. Nothing was run. Set ${variable} to ` +
        `http/json or http/protobuf (or unset it) and point the endpoint at the collector's HTTP port (4318 by default).`,
    );
  }
}

/** Throws OtlpProtocolError when the traces protocol variable names one this exporter does not speak. */
export function checkOtlpProtocol(env: NodeJS.ProcessEnv): void {
  for (const variable of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = env[variable]?.trim();
    if (!protocol) continue;
    if (!HTTP_PROTOCOLS.has(protocol.toLowerCase())) throw new OtlpProtocolError(variable, protocol);
    return; // the traces-specific variable, when set, wins over the general one
  }
}
