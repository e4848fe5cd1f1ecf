/**
 * A LISTEN on one channel of the database, on one connection of the caller's pool: the
 * way a worker hears that there may be work (src/fleet/work-signal.ts) and that runs came to rest
 * (src/fleet/webhooks.ts). It only wakes; what to do is read by the caller's next query.
 */
import type { Notification, PoolClient } from 'pg';
import type { Database } from './pool.ts';
import { isThroughPooler } from './pooler.ts';

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
  /** Through a pooler in transaction mode nobody listens (pooler.ts): said once, then the caller's polls are all there is. */
  private polling = false;

  constructor(
    private readonly pool: Database,
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
    if (this.client || this.stopped || this.polling) return Promise.resolve();
    if (isThroughPooler(this.pool)) {
      this.polling = true;
      this.log(`not listening for ${this.options.what}: the database is reached through a pooler in transaction mode (pgbouncer=true); looking every poll interval`);
      return Promise.resolve();
    }
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
