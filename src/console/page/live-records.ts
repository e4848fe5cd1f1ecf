/**
 * A run's records as they are written, from the console's event stream: read with fetch (which
 * sends the token and the Last-Event-ID of the last record seen), and read again after a pause
 * when it breaks, so a page that reconnects misses nothing.
 */
import type { TailRecord } from '../record-tail.ts';
import type { ConsoleApi } from './api.ts';

export interface LiveRecordsOptions {
  api: ConsoleApi;
  key: string;
  /** The last record the page has: the stream goes on after it. */
  from: number;
  /** A record after the last one seen (each once, in order). */
  onRecord(record: TailRecord): void;
  /** The stream's state in words: live, reconnecting, stopped (and why). */
  onStatus(words: string): void;
}

const RECONNECT_MS = 500;

/** Follows the run's records until the returned function stops it. */
export function followRecords({ api, key, from, onRecord, onStatus }: LiveRecordsOptions): () => void {
  let alive = true;
  let lastSeq = from;
  let controller: AbortController | null = null;

  const connect = () => {
    if (!alive) return;
    controller = new AbortController();
    api
      .events(key, lastSeq, controller.signal)
      .then((response) => {
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        onStatus('live');
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffer = '';
        const pump = (): Promise<void> =>
          reader.read().then((chunk) => {
            if (chunk.done) throw new Error('the stream ended');
            buffer += decoder.decode(chunk.value, { stream: true });
            let at: number;
            while ((at = buffer.indexOf('\n\n')) !== -1) {
              handle(buffer.slice(0, at));
              buffer = buffer.slice(at + 2);
            }
            return pump();
          });
        return pump();
      })
      .catch(() => {
        if (!alive) return;
        onStatus('reconnecting');
        setTimeout(connect, RECONNECT_MS);
      });
  };

  /** One event of the stream: a record, or the damage that stopped it (a comment keeps it alive and is passed over). */
  const handle = (block: string) => {
    let event = 'message';
    let data = '';
    for (const line of block.split('\n')) {
      if (line.indexOf('event:') === 0) event = line.slice(6).trim();
      else if (line.indexOf('data:') === 0) data += line.slice(5).replace(/^ /, '');
    }
    if (event === 'record') {
      const record = JSON.parse(data) as TailRecord;
      if (record.seq <= lastSeq) return;
      lastSeq = record.seq;
      onRecord(record);
    } else if (event === 'damage') {
      onStatus(`stopped: ${(JSON.parse(data) as { error: string }).error}`);
    }
  };

  connect();
  return () => {
    alive = false;
    if (controller) controller.abort();
  };
}
