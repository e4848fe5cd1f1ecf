/**
 * A run's records as they are written, for the page's live stream: the records after the one a
 * page saw last (its Last-Event-ID), then each new one. A folder run's journal is read again
 * only when its size or time changed, so a page left open on a quiet run costs a stat a poll;
 * a fleet run's journal is read each poll, less often.
 */
import fs from 'node:fs';
import { pointOf, type PointName } from '../store/journal/record-points.ts';
import type { ConsoleRun } from './run-sources.ts';

export interface TailRecord {
  seq: number;
  at: number;
  state: string;
  event: string;
  point: PointName;
  turn: number | null;
}

export const FOLDER_POLL_MS = 100;
export const FLEET_POLL_MS = 500;

export class RecordTail {
  private seen: string | null = null;

  constructor(
    private readonly run: ConsoleRun,
    /** The last record the reader has: the tail starts after it (-1: from the first). */
    private last: number,
  ) {}

  get pollMs(): number {
    return this.run.source === 'fleet' ? FLEET_POLL_MS : FOLDER_POLL_MS;
  }

  /** The records written since the last call (none when the journal did not change). */
  async next(): Promise<TailRecord[]> {
    const signature = this.signature();
    if (signature !== null && signature === this.seen) return [];
    const store = this.run.store;
    if (!store) {
      this.seen = signature;
      return [];
    }
    // From the last snapshot on is enough when the reader has every record before it: a page
    // that keeps up with a long run reads what the run wrote since its last snapshot, not the run.
    let loaded = await store.load({ fromLastSnapshot: true });
    if (loaded.records[0]!.record.seq > this.last + 1) loaded = await store.load();
    this.seen = signature;
    const fresh = loaded.records.filter((stored) => stored.record.seq > this.last);
    if (fresh.length) this.last = fresh[fresh.length - 1]!.record.seq;
    return fresh.map(({ record }) => ({
      seq: record.seq,
      at: record.at,
      state: record.state,
      event: record.event,
      point: pointOf(record),
      turn: typeof record.turn === 'number' ? record.turn : null,
    }));
  }

  /** What shows a change of a folder run's journal; null where only reading it tells (the fleet). */
  private signature(): string | null {
    const store = this.run.store;
    const file = store?.journalPath ?? this.run.archivedJournal;
    if (!file) return null;
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    return stat ? `${stat.size}:${stat.mtimeMs}` : 'missing';
  }
}
