/**
 * A small stand-in for `durable-agent serve` on 127.0.0.1: it speaks the wire format of
 * src/client/api-types.ts as a test scripts it, and keeps every request it was sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunEvent } from '../../src/client/api-types.ts';

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A test's handler: answers one request (the body already read). */
export type Handler = (request: SeenRequest, response: http.ServerResponse) => void;

export interface FakeApi {
  baseUrl: string;
  requests: SeenRequest[];
  /** Requests whose connection the client closed, by index into `requests`. */
  closed: Set<number>;
  close(): Promise<void>;
}

export async function startFakeApi(handler: Handler): Promise<FakeApi> {
  const requests: SeenRequest[] = [];
  const closed = new Set<number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      const index = requests.push(seen) - 1;
      res.on('close', () => closed.add(index));
      handler(seen, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    closed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

export function apiError(response: http.ServerResponse, status: number, code: string, message: string): void {
  json(response, status, { error: { code, message } });
}

/** One event as the server frames it: a recorded event with the id of its record, a delta without one. */
export function frame(event: RunEvent): string {
  const id = 'seq' in event ? `id: ${event.seq}\n` : '';
  return `${id}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export function openStream(response: http.ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.flushHeaders();
}

/** Writes, then cuts the connection once the bytes are out: the client reads them, then a dropped stream. */
export function writeThenDrop(response: http.ServerResponse, text: string): void {
  response.write(text, () => response.socket?.destroy());
}

/** Waits until `condition` holds, checking each turn of the event loop (no clock involved). */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
