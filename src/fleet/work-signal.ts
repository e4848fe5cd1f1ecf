/**
 * Wakes an idle worker the moment there may be work: the database NOTIFYs channel da_work when
 * runs are queued, a lease on an unfinished run is released, a decision is given or a pause is
 * cleared (triggers of schema 5), and this LISTENs on one connection of the worker's pool. It
 * only wakes: the claim query decides. A lease that runs out (a dead worker) sends nothing, so the
 * worker still looks every --poll-ms; a broken listening connection is opened again at the next
 * look, and reported as a wake, since a notification may have been missed meanwhile.
 */
import type { Notification, Pool, PoolClient } from 'pg';

export const WORK_CHANNEL = 'da_work';

/**
 * A LISTEN on one channel, on one connection of a pool, calling `onSignal` for each notification;
 * a broken connection is dropped (and counts as a signal: one may have gone with it) and opened
 * again at the next ensure().
 */
export class ChannelSignal {
  private client: PoolClient | null = null;
  /** Gives the listening connection back to the pool, listening to nothing. */
  private giveBack: (() => Promise<void>) | null = null;
  private opening: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly pool: Pool,
    private readonly channel: string,
    /** The notification's payload; absent for a signal that stands for notifications that may have been missed. */
    private readonly onSignal: (payload?: string) => void,
    private readonly log: (line: string) => void,
    private readonly options: {
      /** Said in the log line when it cannot listen: "cannot listen for <what> right now". */
      what: string;
      /** Signal once as soon as it listens: what came while nobody listened had no notification. */
      signalOnListen: boolean;
    },
  ) {}

  /** Listens, unless it already does; a failure is logged once per attempt and retried at the next call. */
  ensure(): Promise<void> {
    if (this.client || this.stopped) return Promise.resolve();
    this.opening ??= this.open().finally(() => (this.opening = null));
    return this.opening;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.opening;
    const giveBack = this.giveBack;
    this.client = null;
    this.giveBack = null;
    await giveBack?.();
  }

  private async open(): Promise<void> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      this.log(`cannot listen for ${this.options.what} right now (${messageOf(error)}); looking every poll interval`);
      return;
    }
    let released = false;
    const onNotification = (message: Notification) => {
      if (message.channel === this.channel) this.onSignal(message.payload);
    };
    // Its error and end listeners stay on a destroyed connection: an error event without one would end the process.
    const destroy = () => {
      if (released) return;
      released = true;
      client.off('notification', onNotification);
      client.release(true);
    };
    const onBroken = () => {
      const listening = this.client === client;
      if (listening) {
        this.client = null;
        this.giveBack = null;
      }
      destroy();
      if (listening) this.onSignal();
    };
    client.on('notification', onNotification);
    client.on('error', onBroken);
    client.on('end', onBroken);
    try {
      await client.query(`LISTEN ${this.channel}`);
    } catch (error) {
      destroy();
      this.log(`cannot listen for ${this.options.what} right now (${messageOf(error)}); looking every poll interval`);
      return;
    }
    if (this.stopped || released) {
      destroy();
      return;
    }
    this.client = client;
    this.giveBack = async () => {
      await client.query(`UNLISTEN ${this.channel}`).catch(() => {});
      if (released) return;
      released = true;
      client.off('notification', onNotification);
      client.off('error', onBroken);
      client.off('end', onBroken);
      client.release();
    };
    if (this.options.signalOnListen) this.onSignal();
  }
}

/** The worker's wake: da_work, and a look once it listens (work queued while nobody listened sent nothing to anyone). */
export class WorkSignal extends ChannelSignal {
  constructor(pool: Pool, onWork: () => void, log: (line: string) => void) {
    super(pool, WORK_CHANNEL, onWork, log, { what: 'new work', signalOnListen: true });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
