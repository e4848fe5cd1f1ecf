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

export class WorkSignal {
  private client: PoolClient | null = null;
  private opening: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly pool: Pool,
    private readonly onWork: () => void,
    private readonly log: (line: string) => void,
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
    const client = this.client;
    this.client = null;
    if (!client) return;
    await client.query(`UNLISTEN ${WORK_CHANNEL}`).catch(() => {});
    client.release();
  }

  private async open(): Promise<void> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      this.log(`cannot listen for new work right now (${(error as Error).message}); looking every poll interval`);
      return;
    }
    const onNotification = (message: Notification) => {
      if (message.channel === WORK_CHANNEL) this.onWork();
    };
    let broken = false;
    const onError = () => {
      if (broken) return;
      broken = true;
      client.off('notification', onNotification);
      if (this.client === client) {
        this.client = null;
        client.release(true);
      }
      this.onWork();
    };
    client.on('notification', onNotification);
    client.on('error', onError);
    client.on('end', onError);
    try {
      await client.query(`LISTEN ${WORK_CHANNEL}`);
    } catch (error) {
      broken = true;
      client.off('notification', onNotification);
      client.release(true);
      this.log(`cannot listen for new work right now (${(error as Error).message}); looking every poll interval`);
      return;
    }
    if (this.stopped || broken) {
      broken = true;
      client.off('notification', onNotification);
      client.release(true);
      return;
    }
    this.client = client;
    // Work that came while nobody listened would have no notification: look once now.
    this.onWork();
  }
}
