/**
 * A client of `durable-agent serve` for the tests, as a product's backend would write one: plain
 * fetch, and a small parser of Server-Sent Events that keeps each message's id, event and data.
 */
import type { RunEvent } from '../../src/client/api-types.ts';

export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

export interface ReceivedEvent {
  /** The SSE id: the record's seq; null for a text-delta. */
  id: string | null;
  event: RunEvent;
}

/** An answer as the server sent it: its status, its JSON read field by field by the test, and its text. */
export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the API's JSON as the server sent it, read field by field
  body: any;
  text: string;
}

export class ApiClient {
  constructor(
    readonly base: string,
    readonly token: string | null,
  ) {}

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), ...extra };
  }

  async get(path: string): Promise<Answer> {
    const response = await fetch(`${this.base}${path}`, { headers: this.headers() });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, text };
  }

  async post(path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Answer> {
    const response = await fetch(`${this.base}${path}`, {
      method: 'POST',
      headers: this.headers({ ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...extra }),
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, text };
  }

  /**
   * Follows a run's events from `lastEventId` on until `stop` says so (given each event as it
   * comes) or the stream ends; the events received, and the raw text of the stream.
   */
  async follow(
    runId: string,
    options: {
      lastEventId?: string | null;
      stop?: (event: ReceivedEvent) => boolean;
      onEvent?: (event: ReceivedEvent) => void;
      /** Stop at the first comment line (a heartbeat). */
      stopAtComment?: boolean;
    } = {},
  ): Promise<{ events: ReceivedEvent[]; comments: string[]; ended: boolean; broken: boolean }> {
    const controller = new AbortController();
    const headers = this.headers(options.lastEventId != null ? { 'last-event-id': options.lastEventId } : {});
    const response = await fetch(`${this.base}/v1/runs/${runId}/events`, { headers, signal: controller.signal });
    if (response.status !== 200) throw new Error(`events of ${runId}: ${response.status} ${await response.text()}`);
    const events: ReceivedEvent[] = [];
    const comments: string[] = [];
    try {
      const onComment = (comment: string) => {
        comments.push(comment);
        if (options.stopAtComment) controller.abort();
      };
      for await (const message of sseMessages(response.body!, onComment)) {
        const event = { id: message.id, event: JSON.parse(message.data) as RunEvent };
        if (event.event.type !== message.event) throw new Error(`SSE event ${message.event} carries a ${event.event.type}`);
        events.push(event);
        options.onEvent?.(event);
        if (options.stop?.(event)) {
          controller.abort();
          return { events, comments, ended: false, broken: false };
        }
      }
    } catch (error) {
      // The server went away mid-stream (killed): what came before it is what the client has.
      if (controller.signal.aborted || (error as Error).name === 'TypeError' || /terminated|socket|ECONNRESET/i.test(String((error as Error).message))) {
        return { events, comments, ended: false, broken: !controller.signal.aborted };
      }
      throw error;
    }
    return { events, comments, ended: true, broken: false };
  }
}

/** The messages of an SSE stream as they come; comment lines go to `onComment`. */
export async function* sseMessages(body: ReadableStream<Uint8Array>, onComment: (comment: string) => void = () => {}): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | null = null;
  let event = 'message';
  let data: string[] = [];
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.search(/\r?\n/);
    while (newline !== -1) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(buffer[newline] === '\r' ? newline + 2 : newline + 1);
      if (line === '') {
        if (data.length) yield { id, event, data: data.join('\n') };
        id = null;
        event = 'message';
        data = [];
      } else if (line.startsWith(':')) {
        onComment(line.slice(1).trim());
      } else {
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') id = value;
        else if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      newline = buffer.search(/\r?\n/);
    }
  }
}

/** The seq of the record a recorded event comes from; -1 for a text-delta (no record holds it yet). */
export function seqOf(event: ReceivedEvent): number {
  return 'seq' in event.event ? event.event.seq : -1;
}

/** The seqs of the recorded events received, each record once (the last of its events carries its id). */
export function recordSeqs(events: readonly ReceivedEvent[]): number[] {
  const seqs: number[] = [];
  for (const { id } of events) if (id !== null && Number(id) !== seqs[seqs.length - 1]) seqs.push(Number(id));
  return seqs;
}
