/**
 * Where a run's journal lives. The file store is the embedded default; a PostgreSQL store for
 * fleets implements the same contract. The contract, for every implementation:
 * - `create` and `append` resolve only once the record is durable (fsync / commit);
 * - appends are atomic per record, and cost what the record costs, never what the history costs;
 * - `load` refuses a journal of another version or a damaged one with a clear error, and
 *   never returns a state that was not written;
 * - only the holder of the run's lock appends.
 */
import type { TornTail } from './framing.ts';
import type { JournalHeader, JournalRecord } from './journal-record.ts';

export interface StoredRecord {
  record: JournalRecord;
  /** Bytes this record took in the store. */
  bytes: number;
  /** Where it starts (a byte offset for files, a row position elsewhere), for messages. */
  offset: number;
}

export interface RecoveredTornTail extends TornTail {
  /** Where the cut-off bytes were kept, if they were kept. */
  keptAt: string | null;
  /**
   * Null for the usual case: a crash interrupted the write of a record that was never committed.
   * Otherwise the number of a committed record that was lost because the file was cut short
   * afterwards; the run was recovered to the record before it.
   */
  lostCommittedRecord: number | null;
}

export interface LoadedRun {
  header: JournalHeader;
  records: StoredRecord[];
  /** Set when the last record had been cut off by a crash and the journal was recovered to the one before. */
  tornTail: RecoveredTornTail | null;
  totalBytes: number;
}

export interface AppendReceipt {
  bytes: number;
}

export interface AppendOptions {
  /**
   * False for bookkeeping that may be lost with the machine but not with the process: the
   * record is written (a killed process keeps it) without waiting for the disk. It becomes
   * durable with the next synced append.
   */
  sync?: boolean | undefined;
}

export interface RunLock {
  /** Who holds it, for messages. */
  readonly holder: string;
  release(): Promise<void>;
}

export interface LoadOptions {
  /** Cut a torn tail off (keeping its bytes aside) so that appends can follow. Only the lock holder may. */
  repair?: boolean | undefined;
}

export interface RunStore {
  /** Where the run lives, in words a user can act on (a path, a database and run id). */
  readonly location: string;
  exists(): Promise<boolean>;
  load(options?: LoadOptions): Promise<LoadedRun>;
  /** Creates the journal with its header and first record, atomically; fails if one exists. */
  create(header: JournalHeader, first: JournalRecord): Promise<AppendReceipt>;
  append(record: JournalRecord, options?: AppendOptions): Promise<AppendReceipt>;
  lock(): Promise<RunLock>;
  /** Moves the run aside (never deletes it) so a new one can start; returns where it went. */
  archive(): Promise<string>;
  /**
   * Optional: throws if this process no longer owns the run (a fleet store whose lease was taken
   * over). Checked before each tool call, so a worker cut off from its run does not act for it.
   */
  assertOwnership?(): Promise<void>;
}
