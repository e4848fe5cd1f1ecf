/**
 * Where a run's journal lives. The file store is the embedded default; a PostgreSQL store for
 * fleets implements the same contract. The contract, for every implementation:
 * - `create` and `append` resolve only once the record is durable (fsync / commit);
 * - appends are atomic per record (per batch for appendBatch), and cost what the records cost,
 *   never what the history costs;
 * - `load` refuses a journal of another version or a damaged one with a clear error, and
 *   never returns a state that was not written;
 * - only the holder of the run's lock appends.
 */
import type { KeysGiven } from '../seal/keys.ts';
import type { ControlInbox, ControlRequest, DecisionInbox } from './inbox/inboxes.ts';
import type { SignalInbox } from './inbox/signal-inbox.ts';
import type { TornTail } from './journal/framing.ts';
import type { JournalHeader, JournalRecord } from './journal/journal-record.ts';
import type { AgentStateName, AwaitedCall, TokenUsage } from '../../machines/agent-loop.types.ts';

export interface StoredRecord {
  record: JournalRecord;
  /** Bytes this record took in the store. */
  bytes: number;
  /** Where it starts (a byte offset for files, a row position elsewhere), for messages. */
  offset: number;
  /** Its checksum (checksumOf its JSON), when the store knows it: a snapshot after it names it. */
  crc?: string | undefined;
}

export interface RecoveredTornTail extends TornTail {
  /** Where the cut-off bytes were kept, if they were kept. */
  keptAt: string | null;
  /**
   * Null for the usual case: a crash interrupted the write of a record that was never committed.
   * Otherwise the number of a committed record that was lost (the file was cut short afterwards,
   * or a power loss kept the mark without it) and that the caller accepted to lose
   * (acceptLostRecord); the run was recovered to the record before it.
   */
  lostCommittedRecord: number | null;
}

export interface LoadedRun {
  header: JournalHeader;
  records: StoredRecord[];
  /** Set when the last record had been cut off by a crash and the journal was recovered to the one before. */
  tornTail: RecoveredTornTail | null;
  totalBytes: number;
  /**
   * Set when the run is sealed and was read without its key: its records hold sealed strings in
   * place of its content (what finds and operates runs reads as ever). What shows content throws
   * this: the master key it needs not given, or the run's key deleted (see requireContent).
   */
  contentRefused?: Error | undefined;
}

/** The run's content as loaded, or the refusal a sealed run read without its key carries: never sealed strings shown as text. */
export function requireContent(loaded: LoadedRun): LoadedRun {
  if (loaded.contentRefused) throw loaded.contentRefused;
  return loaded;
}

/** A forked run as it is written: its journal, and where it stands after its last record. */
export interface ForkedRun {
  header: JournalHeader;
  records: readonly JournalRecord[];
  state: AgentStateName;
  turn: number;
  /** The call it waits on (state awaitingDecision), else null. */
  awaiting: AwaitedCall | null;
}

export interface AppendReceipt {
  bytes: number;
  /** appendBatch: the bytes of each record, in order (their sum is `bytes`). */
  bytesEach?: number[] | undefined;
  /** How long the store waited for the disk (fsync), when it knows; absent for a write it did not sync. */
  syncMs?: number | undefined;
}

export interface AppendOptions {
  /**
   * False for bookkeeping that may be lost with the machine but not with the process: the
   * record is written (a killed process keeps it) without waiting for the disk. It becomes
   * durable with the next synced append.
   */
  sync?: boolean | undefined;
  /**
   * Other appends may arrive while this one waits for the disk (calls still running in
   * parallel): wait without blocking, so that appends made meanwhile share the next fsync
   * (group commit). Without it a store may block for its fsync (the fastest for one writer).
   */
  groupCommit?: boolean | undefined;
  /**
   * Given on the record that counts one reply's tokens as it arrives (MODEL_USAGE): that reply's
   * usage and its cost at list prices (null: the model has no price). A store that charges a
   * tenant's spend charges it with this record, in the same write (the PostgreSQL store, for a
   * fleet tenant with a quota or a rate limit); the others ignore it.
   */
  reply?: ReplyCharge | undefined;
}

/** One reply's usage and its cost at list prices (null: no price). */
export interface ReplyCharge {
  usage: TokenUsage;
  costUsd: number | null;
}

export interface RunLock {
  /** Who holds it, for messages. */
  readonly holder: string;
  /** Set when this lock was taken over from another holder the user should hear about. */
  readonly takenOver?: LockTakeOver | null;
  release(): Promise<void>;
}

export interface LockTakeOver {
  /** Who held the run: pid, host, since when, last heartbeat, command. */
  holder: string;
  /** Why it was taken over (its heartbeat is past the lease, --take-over). */
  why: string;
  /** How long the new holder waited for a live old one to notice and stop. */
  waitedMs: number;
}

export interface LockOptions {
  /** Take the lock at once, whoever holds it (the user is sure the holder is gone or wants it stopped). */
  takeOver?: boolean;
}

export interface LoadOptions {
  /** Cut a torn tail off (keeping its bytes aside) so that appends can follow. Only the lock holder may. */
  repair?: boolean | undefined;
  /**
   * Recover a journal that ends inside its last committed record to the record before it,
   * instead of refusing it (StoreLostRecordError): a person's decision, since what that record
   * had started may happen again. A store whose writes cannot lose a committed record
   * (PostgreSQL commits each record in one statement) refuses a missing one regardless.
   */
  acceptLostRecord?: boolean | undefined;
  /**
   * Called with the header before anything is repaired: throwing refuses the load with nothing
   * changed (a resume checks that what resumes the run is what started it). The file store calls
   * it before it parses any record, so a refusal costs no read of a long journal.
   */
  checkHeader?: ((header: JournalHeader) => void) | undefined;
  /**
   * Load only from the last snapshot record on (the records before it are not read): what a
   * resume needs, in time and memory that do not grow with the run's length. The first record
   * returned is then that snapshot (or record 0 when there is none), its link to the record
   * before it checked. Readers of the whole story (status, history, viz) leave it off.
   */
  fromLastSnapshot?: boolean | undefined;
  /**
   * With fromLastSnapshot: a run whose last record is a final one (it carries a final mark, and
   * nothing follows it) is loaded as that record alone, which folds into its state without the
   * messages (DurableView.fromFinalRecord): what a resume that only answers needs, read in time
   * that does not grow with the run. Any other run loads as fromLastSnapshot alone loads it.
   */
  finalRecord?: boolean | undefined;
}

export type { ControlInbox, DecisionInbox, InboxDecision } from './inbox/inboxes.ts';
export type { Signal, SignalInbox } from './inbox/signal-inbox.ts';

export interface RunStore {
  /** Where the run lives, in words a user can act on (a path, a database and run id). */
  readonly location: string;
  /**
   * A store that seals: runs it starts from now are sealed with these keys, sealed runs it loads
   * open with them (see src/seal/). Absent: the store keeps content plain, and keys are refused.
   */
  giveKeys?(keys: KeysGiven): void;
  /** The keys this store was given (absent: none): the runs a sub-agent call of its run starts beside it are given them too. */
  keysGiven?(): KeysGiven | undefined;
  /**
   * Of a store that seals: whether the run it last created or loaded is sealed, and whether its
   * key is open here (what a trace may export: src/telemetry/run-tracing.ts). Absent: plain.
   */
  sealingOfRun?(): { sealed: boolean; keyHeld: boolean };
  /**
   * The folder the run's files are kept in (its journal, fork notes, archive), for a store that
   * keeps its run in a folder; absent for one that does not (memory, PostgreSQL). What a caller
   * asks instead of which class the store is (see keptInFolder).
   */
  readonly dir?: string | undefined;
  /** The journal's file, for a store that keeps it in one (a live view tails it). */
  readonly journalPath?: string | undefined;
  /**
   * The id the store keeps its run under, when it is opened by id (a folder of runs, a fleet's
   * row): a run started in it takes that id, and starting it again attaches to it.
   */
  readonly runId?: string | undefined;
  exists(): Promise<boolean>;
  /**
   * Optional: true when the run exists but was never started (a fleet run submitted and not yet
   * claimed: it has no journal). A cancel of such a run waits in its inbox for the worker that starts it.
   */
  queued?(): Promise<boolean>;
  /**
   * Optional: the stores of the runs this run waits for, queued by its calls to be driven by any
   * process (a fleet run's sub-agent children); a cancel or a pause of this run is passed on to
   * them. Without it, such runs are found beside the run (a folder of runs).
   */
  awaitedRuns?(): Promise<RunStore[]>;
  load(options?: LoadOptions): Promise<LoadedRun>;
  /** Creates the journal with its header and first record, atomically; fails if one exists. */
  create(header: JournalHeader, first: JournalRecord): Promise<AppendReceipt>;
  append(record: JournalRecord, options?: AppendOptions): Promise<AppendReceipt>;
  /**
   * Appends records as one atomic unit, with one fsync (one commit): after a kill, a power loss
   * or a failed write, every reader sees all of them or none. Appends made while one waits for
   * the disk are made durable together with the next (group commit); each resolves once its
   * own records are durable. Optional for stores written elsewhere; every store here has it.
   */
  appendBatch?(records: readonly JournalRecord[], options?: AppendOptions): Promise<AppendReceipt>;
  /**
   * Optional (needed to fork into this store): creates the journal with its header and several
   * records at once, atomically like create(); fails if one exists.
   */
  createWith?(header: JournalHeader, records: readonly JournalRecord[]): Promise<AppendReceipt>;
  /**
   * Optional, for a store that writes a forked run in one step of its own (the fleet's: the run's
   * row beside its records, in one transaction): the run whole, or 'exists' with nothing written
   * where a run is stored already. Without it a fork is written with createWith under the lock
   * (createForked, fork-into.ts).
   */
  createFork?(fork: ForkedRun): Promise<'created' | 'exists'>;
  /** A fleet store's run: its id in the fleet's table of runs, which a fork of it names as its parent. */
  readonly fleetRun?: string | undefined;
  lock(options?: LockOptions): Promise<RunLock>;
  /** Moves the run aside (never deletes it) so a new one can start; returns where it went. */
  archive(): Promise<string>;
  /**
   * Optional: throws if this process no longer owns the run (a fleet store whose lease was taken
   * over, a file lock taken over with --take-over). Checked before each tool call, so a process
   * cut off from its run does not act for it.
   */
  assertOwnership?(): Promise<void>;
  /**
   * Where decisions about the run's waiting calls arrive (see DecisionInbox). A store without
   * one can still run tools that need a decision, through the run's onDecision handler.
   */
  readonly decisions?: DecisionInbox | undefined;
  /** Where cancel and pause requests wait for the run's writer (src/control/); none: the run cannot be cancelled from outside. */
  readonly control?: ControlInbox | undefined;
  /** Where signals for the run's wait calls arrive (see SignalInbox); none: its waits end by their time only. */
  readonly signals?: SignalInbox | undefined;
}

/**
 * A store that keeps its run in a folder of files: its folder and journal file, and every inbox.
 * What the archive, the blobs and a fork's notes need beyond the contract.
 */
export interface FolderRunStore extends RunStore {
  readonly dir: string;
  readonly journalPath: string;
  readonly decisions: DecisionInbox;
  readonly control: ControlInbox;
  readonly signals: SignalInbox;
  /** Closes the journal's file (a later append or load opens it again). */
  close(): void;
}

/** Whether this store keeps its run in a folder of files: asked instead of testing for a class. */
export function keptInFolder(store: RunStore): store is FolderRunStore {
  return store.dir !== undefined && store.journalPath !== undefined;
}

/** A store of a run in a database, opened by the run's id: every inbox, and whether it waits for a worker. */
export interface DatabaseRunStore extends RunStore {
  readonly runId: string;
  readonly decisions: DecisionInbox;
  readonly control: ControlInbox;
  readonly signals: SignalInbox;
  queued(): Promise<boolean>;
  awaitedRuns(): Promise<RunStore[]>;
}

/** One run a folder of runs holds: the current run of a run folder, or one of its archived runs. */
export interface StoredRunEntry {
  /** The folder's name for the run (its id under runs/); null for the run at the root, whose id is in its header. */
  readonly folderId: string | null;
  /** The journal's path. */
  readonly location: string;
  readonly archived: boolean;
  /** The journal from its last snapshot on: enough for where the run stands. */
  read(): Promise<LoadedRun>;
  /** The cancel and pause requests waiting for its writer ([] for an archived run: none can reach it). */
  controls(): Promise<ControlRequest[]>;
}

/** A folder of runs, each by its id: opening one reads nothing but that run's own folder. */
export interface RunsFolder {
  readonly root: string;
  readonly location: string;
  /** The store of the run with this id (RunIdError for an id that is not a safe name); nothing is read or made. */
  store(runId: string): FolderRunStore;
  /**
   * Every run of the folder, current and archived, in no particular order; with `idPrefix`, only
   * the runs by id whose id starts so (a run's children), found by their names alone.
   */
  entries(only?: { idPrefix: string }): StoredRunEntry[];
  /** The runs of one run folder alone (null: the state folder's own), current and archived; a folder of runs that has run folders. */
  folderEntries?(folderId: string | null): StoredRunEntry[];
}
