/**
 * A real OTLP/HTTP trace receiver on 127.0.0.1 for the tests: takes what the official exporter
 * POSTs to /v1/traces (OTLP JSON: hex ids, attribute values as { stringValue | intValue | … }),
 * answers as a collector does, and keeps the spans and the raw bodies.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type AttributeMap = Record<string, unknown>;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: number;
  attributes: AttributeMap;
  events: Array<{ name: string; attributes: AttributeMap }>;
  links: Array<{ traceId: string; spanId: string }>;
  status: { code: number; message: string | null };
  resource: AttributeMap;
}

export interface OtlpReceiver {
  endpoint: string;
  spans: ReceivedSpan[];
  /** Every request body as received, to look for what must never be sent. */
  bodies: string[];
  contentTypes: string[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}

// biome-ignore lint/suspicious/noShadowRestrictedNames: a module's own helper; the global valueOf is never meant here
function valueOf(value: OtlpValue | undefined): unknown {
  if (!value) return null;
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  if ('arrayValue' in value) return (value.arrayValue?.values ?? []).map(valueOf);
  return null;
}

function attributesOf(list: Array<{ key: string; value: OtlpValue }> | undefined): AttributeMap {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      contentTypes.push(String(request.headers['content-type']));
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      // biome-ignore lint/suspicious/noExplicitAny: OTLP's JSON as the exporter sent it, read field by field
      const document = JSON.parse(body) as { resourceSpans?: any[] };
      for (const resourceSpans of document.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || null,
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              // biome-ignore lint/suspicious/noExplicitAny: OTLP's JSON as the exporter sent it, read field by field
              events: (span.events ?? []).map((event: any) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
              // biome-ignore lint/suspicious/noExplicitAny: OTLP's JSON as the exporter sent it, read field by field
              links: (span.links ?? []).map((link: any) => ({ traceId: link.traceId, spanId: link.spanId })),
              status: { code: span.status?.code ?? 0, message: span.status?.message ?? null },
              resource,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
