/**
 * A worker's runs' model text as it streams, gathered a tenth of a second at a time per run and
 * published (src/store/pg/text-stream.ts) for the HTTP API's followers. Best effort: a publish
 * that fails is dropped, and never touches the run.
 */
import type { Database } from '../store/pg/pool.ts';
import { publishText } from '../store/pg/text-stream.ts';

export const TEXT_FLUSH_MS = 100;

export class TextPublisher {
  private readonly pending = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> = Promise.resolve();

  constructor(private readonly pool: Database) {}

  add(runId: string, text: string): void {
    this.pending.set(runId, (this.pending.get(runId) ?? '') + text);
    this.timer ??= setTimeout(() => this.flush(), TEXT_FLUSH_MS);
    this.timer.unref?.();
  }

  /** Publishes what is gathered now, in order after what went before. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const pieces = [...this.pending];
    this.pending.clear();
    this.sending = this.sending.then(async () => {
      for (const [runId, text] of pieces) await publishText(this.pool, runId, text).catch(() => {});
    });
    return this.sending;
  }
}
