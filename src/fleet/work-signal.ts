/**
 * Wakes an idle worker the moment there may be work: the database NOTIFYs channel da_work when
 * runs are queued, a lease on an unfinished run is released, a decision is given or a pause is
 * cleared (triggers of schema 5), and this LISTENs on one connection of the worker's pool. It
 * only wakes: the claim query decides. A lease that runs out (a dead worker) sends nothing, so the
 * worker still looks every --poll-ms; a broken listening connection is opened again at the next
 * look, and reported as a wake, since a notification may have been missed meanwhile.
 */
import { ChannelSignal } from '../store/pg/channel-signal.ts';
import type { Database } from '../store/pg/pool.ts';

export const WORK_CHANNEL = 'da_work';

/** The worker's wake: da_work, and a look once it listens (work queued while nobody listened sent nothing to anyone). */
export class WorkSignal extends ChannelSignal {
  constructor(pool: Database, onWork: () => void, log: (line: string) => void) {
    super(pool, WORK_CHANNEL, onWork, log, { what: 'new work', signalOnListen: true });
  }
}
