/**
 * Trace export for the command line and workers: the official OpenTelemetry SDK with its
 * OTLP/HTTP exporter (JSON), configured by the standard variables (OTEL_EXPORTER_OTLP_*,
 * OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*). Loaded only when
 * otlpTracesWanted() says so; the SDK packages are optional peer dependencies, required here
 * (they are CommonJS) so that a missing one is named (OtelSdkMissingError).
 */
import { createRequire } from 'node:module';
import type { Context, Tracer } from '@opentelemetry/api';
import type { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type * as Resources from '@opentelemetry/resources';
import type { BasicTracerProvider, BatchSpanProcessor, ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OtelSdkMissingError } from './otel-missing.ts';
import { endOpenSessions, type SessionEnd } from './run-tracing.ts';

/** The longest a process about to exit waits for its spans to leave. */
const EXIT_FLUSH_MS = 5_000;

export interface TraceExport {
  tracer: Tracer;
  /** --otel-content: the spans carry messages and tool content. */
  content: boolean;
  /** Ends the sessions still open (the process is about to exit, and why), then flushes. */
  stop(why: SessionEnd): Promise<void>;
  /** Flushes what is left and shuts the exporter down (at most a few seconds). */
  shutdown(): Promise<void>;
}

export function startTraceExport(options: { content: boolean; serviceVersion: string }): TraceExport {
  const { BasicTracerProvider: Provider, BatchSpanProcessor: Batch } = load<{
    BasicTracerProvider: typeof BasicTracerProvider;
    BatchSpanProcessor: typeof BatchSpanProcessor;
  }>('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter: Exporter } = load<{ OTLPTraceExporter: typeof OTLPTraceExporter }>('@opentelemetry/exporter-trace-otlp-http');
  const resources = load<typeof Resources>('@opentelemetry/resources');
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over these defaults.
  const resource = resources
    .resourceFromAttributes({ 'service.name': 'durable-agent', 'service.version': options.serviceVersion })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const batch = new Batch(new Exporter());
  const provider = new Provider({ resource, spanProcessors: [new FlushOnRunRoot(batch)] });
  let shut: Promise<void> | null = null;
  const shutdown = () => (shut ??= withDeadline(provider.shutdown(), EXIT_FLUSH_MS));
  return {
    tracer: provider.getTracer('durable-agent', options.serviceVersion),
    content: options.content,
    shutdown,
    async stop(why) {
      endOpenSessions(why);
      await shutdown();
    },
  };
}

/**
 * Sends the run's root span as soon as it ends (the journal then exists): a process killed in
 * its first seconds would otherwise take it along, and every later session points at it.
 */
class FlushOnRunRoot implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}
  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }
  onEnd(span: ReadableSpan): void {
    this.next.onEnd(span);
    if (span.name === 'durable-agent run') void this.next.forceFlush().catch(() => {});
  }
  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

function load<T>(name: string): T {
  try {
    return createRequire(import.meta.url)(name) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && (error as Error).message.includes(`'${name}'`)) {
      throw new OtelSdkMissingError(name, error);
    }
    throw error;
  }
}

/** An unreachable collector must not hold the process: the exporter gives up at the deadline. */
async function withDeadline(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  try {
    await Promise.race([work.catch(() => {}), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
