/**
 * Following a run's events (GET /v1/runs/:id/events, Server-Sent Events) as an async iterator
 * that outlives dropped connections: it reconnects with the id of the last record whose events
 * all arrived, waits a growing while between failed tries, and yields each recorded event once.
 */
import type { RunEvent } from './api-types.ts';
import { backoffDelay, sleep as realSleep } from './backoff.ts';
import { ApiError, ApiUnreachableError } from './client-errors.ts';
import { baseHeaders, type ClientConfig, type RetryOptions } from './client-options.ts';
import { RecordCursor } from './record-cursor.ts';
import { errorOf } from './request.ts';
import { type SseMessage, SseParser } from './sse-parser.ts';

export type TextDeltaEvent = Extract<RunEvent, { type: 'text-delta' }>;

export interface FollowOptions {
  /** Start after this record (its seq): the events of later records only. Default: from the run's first record. */
  after?: number | undefined;
  /** Aborting it ends the iterator (quietly: the loop just ends) and closes the connection. */
  signal?: AbortSignal | undefined;
  /**
   * Takes the `text-delta` events (the model's text as it streams, never recorded). Without it they
   * are yielded in their place among the others; with it the iterator yields recorded events only.
   */
  onDelta?: ((event: TextDeltaEvent) => void) | undefined;
  /**
   * Reconnecting. maxAttempts counts tries in a row that fail (a connection refused, a 5xx, a
   * stream that dropped); a connection that opens resets the count and the wait. Default: 10
   * tries, waits from 500 ms (or the server's `retry:`) doubling up to 30 s, half of each jitter.
   */
  reconnect?: RetryOptions | undefined;
  /**
   * A connection silent this long (no event, no keep-alive comment) is taken for dropped and made
   * again: a connection cut without a word (a laptop's network changed) otherwise waits forever.
   * Set it above the server's keep-alive interval. Default: none.
   */
  idleTimeoutMs?: number | undefined;
}

export const DEFAULT_FOLLOW_ATTEMPTS = 10;

/** Statuses after which trying again cannot help: the iterator ends with the ApiError. */
function isFinal(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set<RunEvent['type']>(['state', 'text-delta', 'reply', 'tool-call', 'tool-result', 'waiting', 'end']);

export async function* followRunEvents(config: ClientConfig, runId: string, options: FollowOptions = {}): AsyncGenerator<RunEvent, void, undefined> {
  const path = `/v1/runs/${encodeURIComponent(runId)}/events`;
  const label = `GET ${path}`;
  // The client's waits and clock carry over; its count of tries is for single requests, not for a stream kept open.
  const reconnect: RetryOptions = { ...config.retry, maxAttempts: undefined, ...options.reconnect };
  const maxAttempts = Math.max(1, reconnect.maxAttempts ?? DEFAULT_FOLLOW_ATTEMPTS);
  const sleep = reconnect.sleep ?? realSleep;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) stop.abort();
  const cursor = new RecordCursor(options.after);
  let failures = 0;
  let serverRetryMs: number | null = null;
  const wait = () => sleep(backoffDelay(failures, { ...reconnect, initialDelayMs: serverRetryMs ?? reconnect.initialDelayMs }), stop.signal);

  try {
    while (!stop.signal.aborted) {
      const headers: Record<string, string> = { ...baseHeaders(config, 'text/event-stream'), 'cache-control': 'no-cache' };
      if (cursor.complete !== null) headers['last-event-id'] = String(cursor.complete);
      let response: Response;
      try {
        response = await config.fetch(config.base + path, { method: 'GET', headers, signal: stop.signal });
      } catch (error) {
        if (stop.signal.aborted) return;
        failures += 1;
        if (failures >= maxAttempts) throw new ApiUnreachableError(label, failures, { cause: error });
        await wait();
        continue;
      }
      if (!response.ok) {
        if (isFinal(response.status)) throw await errorOf(response, label);
        failures += 1;
        if (failures >= maxAttempts) throw await errorOf(response, label);
        await response.body?.cancel().catch(() => undefined);
        await wait();
        continue;
      }
      const type = response.headers.get('content-type') ?? '';
      if (!type.includes('text/event-stream') || !response.body) {
        await response.body?.cancel().catch(() => undefined);
        throw new ApiError(response.status, 'unreadable', `the answer is not an event stream (content-type ${JSON.stringify(type)})`, label);
      }
      failures = 0;
      const parser = new SseParser();
      const decoder = new TextDecoder();
      const reader = response.body.getReader();
      try {
        for (;;) {
          // A read that fails is a dropped connection, as is an end before `end` or a silence too long: all reconnect below.
          const chunk = await readWithin(reader, options.idleTimeoutMs);
          if (!chunk || chunk.done) break;
          const messages = parser.push(decoder.decode(chunk.value, { stream: true }));
          if (parser.retry !== null) serverRetryMs = parser.retry;
          for (const message of messages) {
            const event = runEventOf(message, label);
            if (!event) continue;
            if (event.type === 'text-delta') {
              if (options.onDelta) options.onDelta(event);
              else yield event;
            } else if (cursor.take(event.seq, event) && KNOWN_TYPES.has(event.type)) {
              yield event;
              if (event.type === 'end') return;
            }
            if (stop.signal.aborted) return;
          }
        }
      } finally {
        await reader.cancel().catch(() => undefined);
      }
      if (stop.signal.aborted) return;
      failures += 1;
      if (failures >= maxAttempts) throw new ApiUnreachableError(label, failures, { cause: new Error('the event stream ended before the run did') });
      await wait();
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}

/** The next chunk; null when the read failed or nothing came within `idleMs` (the reader is then cancelled). */
async function readWithin(reader: ReadableStreamDefaultReader<Uint8Array>, idleMs: number | undefined) {
  const timer = idleMs === undefined ? undefined : setTimeout(() => void reader.cancel().catch(() => undefined), idleMs);
  try {
    return await reader.read();
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** The run event a message carries; null for one without data of the API's (a keep-alive, say). */
function runEventOf(message: SseMessage, label: string): RunEvent | null {
  if (message.data === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(message.data);
  } catch {
    throw new ApiError(200, 'unreadable', `an event's data is not JSON: ${JSON.stringify(message.data.slice(0, 120))}`, label);
  }
  if (typeof value !== 'object' || value === null || typeof (value as { type?: unknown }).type !== 'string') return null;
  const event = value as RunEvent;
  if (event.type === 'text-delta') return event;
  // A recorded event of a type this client does not know still counts in its record (kept by seq), and is not yielded.
  return typeof (event as { seq?: unknown }).seq === 'number' ? event : null;
}
