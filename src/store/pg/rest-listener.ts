/** Waiting for one fleet run's rest on a connection of its own that LISTENs on da_rest (src/fleet/await-run.ts uses it). */
import type { Notification, PoolClient } from 'pg';
import type { Database } from './pool.ts';
import { isThroughPooler } from './pooler.ts';
import { readRestRow, REST_CHANNEL, type RestRow, type RestRowState } from './run-rest.ts';

/** The first look again of a wait that cannot listen (through a pooler); each next one waits twice as long, up to POLL_MAX_MS. */
const POLL_FIRST_MS = 100;
const POLL_MAX_MS = 2_000;

/**
 * One connection of the pool, LISTENing on da_rest, woken by a notification for this run or by
 * the connection breaking (after which the next read connects and LISTENs again before reading).
 * Through a pooler in transaction mode (pooler.ts) nobody listens: the run's row is read again
 * after 100 ms, then twice as long each time, up to every 2 s.
 */
export class RestListener {
  private client: PoolClient | null = null;
  /** Set by what should make the next wait return at once: it came while nobody waited. */
  private woken = false;
  private wake: (() => void) | null = null;
  private off: (() => void) | null = null;
  /** Whether a LISTEN ever succeeded: only after one is a lost connection retried. */
  listened = false;
  lastState: RestRowState | null = null;
  private readonly polled: boolean;
  private pollMs = POLL_FIRST_MS;

  constructor(
    private readonly pool: Database,
    private readonly runId: string,
  ) {
    this.polled = isThroughPooler(pool);
  }

  /** LISTENs first if it does not, then reads the run's row. */
  async read(): Promise<RestRow | null> {
    if (this.polled) {
      const row = await readRestRow(this.pool, this.runId, true);
      // Its first read answered: a lost connection from now on is retried, as after a LISTEN.
      this.listened = true;
      if (row) this.lastState = row.state;
      return row;
    }
    const client = this.client ?? (await this.listen());
    // What woke us is answered by this read; whatever comes during it wakes the next wait.
    this.woken = false;
    const row = await readRestRow(client, this.runId, true);
    if (row) this.lastState = row.state;
    return row;
  }

  /** Until a notification for the run, a broken connection, `ms` or the signal. */
  next(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (this.woken) return Promise.resolve();
    if (this.polled) {
      const pollMs = this.pollMs;
      this.pollMs = Math.min(pollMs * 2, POLL_MAX_MS);
      return this.pause(Math.min(pollMs, ms), signal);
    }
    return this.pause(ms, signal, true);
  }

  /** Until `ms` or the signal; with `wakeable`, until woken too. */
  pause(ms: number, signal: AbortSignal | undefined, wakeable = false): Promise<void> {
    // Aborted during a read: its abort event has passed already.
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.wake = null;
      };
      const onAbort = () => {
        finish();
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        finish();
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener('abort', onAbort, { once: true });
      if (wakeable) {
        this.wake = () => {
          finish();
          resolve();
        };
      }
    });
  }

  async close(): Promise<void> {
    const client = this.client;
    const off = this.off;
    this.client = null;
    this.off = null;
    if (!client) return;
    try {
      await client.query(`UNLISTEN ${REST_CHANNEL}`);
      off?.();
      client.release();
    } catch (error) {
      // Destroyed, not given back: a connection left listening would hear every run's rest.
      client.release(error instanceof Error ? error : true);
    }
  }

  private async listen(): Promise<PoolClient> {
    const client = await this.pool.connect();
    const onNotification = (message: Notification) => {
      if (message.channel === REST_CHANNEL && message.payload === this.runId) this.rouse();
    };
    // Stays on a connection that is destroyed: an error event without a listener would end the process.
    const onBroken = () => {
      if (this.client !== client) return;
      this.client = null;
      this.off = null;
      client.off('notification', onNotification);
      client.release(true);
      // A notification may have been lost with it: read again (connecting again) at once.
      this.rouse();
    };
    client.on('notification', onNotification);
    client.on('error', onBroken);
    client.on('end', onBroken);
    const off = () => {
      client.off('notification', onNotification);
      client.off('error', onBroken);
      client.off('end', onBroken);
    };
    try {
      await client.query(`LISTEN ${REST_CHANNEL}`);
    } catch (error) {
      client.off('notification', onNotification);
      client.release(true);
      throw error;
    }
    this.client = client;
    this.off = off;
    this.listened = true;
    return client;
  }

  private rouse(): void {
    this.woken = true;
    this.wake?.();
  }
}
