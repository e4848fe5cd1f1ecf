/** The OpenTelemetry SDK packages the command line exports traces with: optional peer dependencies. */
import { OptionalDependencyMissingError } from '../util/durable-agent-error.ts';
export const OTEL_SDK_PACKAGES = {
  '@opentelemetry/sdk-trace-base': '^2.12.1',
  '@opentelemetry/exporter-trace-otlp-http': '^0.223.1',
  '@opentelemetry/resources': '^2.12.1',
} as const;

/** Traces were asked for (OTEL_EXPORTER_OTLP_ENDPOINT) but the SDK is not installed; nothing was run. */
export class OtelSdkMissingError extends OptionalDependencyMissingError {
  override readonly name = 'OtelSdkMissingError';
  constructor(packageName: string, cause?: unknown) {
    const install = Object.entries(OTEL_SDK_PACKAGES)
      .map(([name, range]) => `${name}@${range}`)
      .join(' ');
    super(
      packageName,
      `OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, so durable-agent exports traces, but the ` +
        `package ${packageName} is not installed. Nothing was run. Install the OpenTelemetry SDK next to durable-agent ` +
        `(npm install ${install}), or unset the variable to run without traces.`,
      { cause },
    );
  }
}
