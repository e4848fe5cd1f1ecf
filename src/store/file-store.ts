/**
 * The embedded store: one append-only journal file per run directory.
 *
 * Layout: a header line, a fixed-width commit mark, then one checksummed record per line.
 * Durability: a record is written after the last one, the commit mark is rewritten in place
 * to count it, and one fdatasync makes both durable before append() resolves. A record
 * appended without a sync (a reply's token count) is counted by the next synced append. The
 * journal is created complete (header, mark, first record) in a temporary file, fsynced,
 * linked into place (which fails if a journal exists) and the directory fsynced. A sealed run's
 * key file is made durable (run-key-file.ts) while that temporary file is fsynced, so that the
 * two waits overlap; the journal's name is linked only once both are over.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FileDecisionInbox, type InboxPoint } from './inbox/file-decision-inbox.ts';
import { FileBlobs } from './blobs.ts';
import { fsyncDir } from '../util/durable-file.ts';
import { CommitQueue } from './commit-queue.ts';
import { StoreMissingError, StoreWriteError } from './errors.ts';
import { CHECKSUM_HEX_DIGITS, type CommitMark, CommitMarkFramer, frameCommitMark, frameLine, LineFramer } from './journal/framing.ts';
import { environmentProblem, inEnvironment } from './fs-problems.ts';
import type { JournalHeader, JournalRecord } from './journal/journal-record.ts';
import { type JournalBytes, type ReadJournal, readJournal } from './journal/journal-reader.ts';
import { readWhileWritten } from './live-read.ts';
import { CONTROL_KINDS } from './inbox/inboxes.ts';
import { type ControlPoint, FileControlInbox } from './inbox/file-control-inbox.ts';
import { FileSignalInbox } from './inbox/file-signal-inbox.ts';
import type { HeldLockFile } from './lock-file.ts';
import { DEFAULT_LOCK_LEASE_MS, LOCK_LEASE_RANGE_MS } from './lock-lease.ts';
import { describePoint, pointOf } from './journal/record-points.ts';
import type { AppendOptions, AppendReceipt, LoadedRun, LoadOptions, LockOptions, RecoveredTornTail, FolderRunStore, RunLock } from './store.ts';
import { WriteFaultPlan } from './write-faults.ts';
import { openRegularFile } from '../util/regular-file.ts';
import { checkStateFolder, PRIVATE_DIR, PRIVATE_FILE } from './state-folder.ts';
import { stateFolderOf } from './state-folder-of.ts';
import type { KeysGiven } from '../seal/keys.ts';
import { RunSealing } from './run-sealing.ts';
import type { ValueSealer } from '../seal/value-codec.ts';
import type { InboxContent } from './inbox/inbox-content.ts';
import { dropArchivedRunKeyFile, linkRunKeyFileTo, runKeyFilePlace, writeRunKeyFile } from './run-key-file.ts';
import type { WrappedRunKey } from '../seal/envelope.ts';
import { markRunsChanged } from './runs-changed.ts';
import { FINAL_STATES } from '../../machines/agent-loop.types.ts';

export interface FileStoreOptions {
  /** The id of the run this folder holds (FileRuns opens a run's folder by its id): see RunStore.runId. */
  runId?: string | undefined;
  /** Armed write failures (tests and drills), e.g. "effect-write:3", "lock-write:1". */
  writeFaults?: string | undefined;
  /**
   * How long a lock held from another host may go without a heartbeat before it is taken over;
   * the holder's heartbeat beats at a tenth of it, at most every 2 s. Default: 30000 (30 s).
   */
  lockLeaseMs?: number | undefined;
  /** Drills: called as a decision's write passes a point (a test kills the process there). */
  onDecisionPoint?: ((point: InboxPoint) => void) | undefined;
  /** Drills: called as a cancel or pause request's write passes a point (a test kills the process there). */
  onControlPoint?: ((point: ControlPoint) => void) | undefined;
  /** Drills: called once a tool result's image or document is durable in its blob, before the record that refers to it is written. */
  onBlobWritten?: ((file: string) => void) | undefined;
  /** Drills: called as a new journal's creation passes a point (a test kills the process there). */
  onCreatePoint?: ((point: CreatePoint) => void) | undefined;
  /** Drills: called once archive() has moved the journal, before the run folder lets go of its run key. */
  onArchivePoint?: ((point: 'journal-moved') => void) | undefined;
  /**
   * The master keys the user holds (or a function that reads them when first needed): a run
   * created with them is sealed; a sealed run loaded with them reads as any other. See run-sealing.ts.
   */
  keys?: KeysGiven | undefined;
}

export const JOURNAL_FILE = 'journal.jsonl';

/**
 * The points of a new journal's creation, in order: a sealed run's key file durable (its name and
 * its folder too; the journal's temp file may still be on its way), the journal's temp file
 * durable as well, the journal linked to its name (the folder not fsynced yet).
 */
export const CREATE_POINTS = ['run-key', 'journal-temp', 'journal-link'] as const;
export type CreatePoint = (typeof CREATE_POINTS)[number];

/** One appendBatch: its records, and whether it waits for the disk. */
interface PendingUnit {
  /** As written: large payloads replaced by references to their blobs. */
  records: readonly JournalRecord[];
  /** As given (the same objects where nothing was replaced). */
  given: readonly JournalRecord[];
  sync: boolean;
}

/** One flush's lines written (and its mark, if it syncs): what is left is the fdatasync, then the receipts. */
interface Flush {
  position: AppendPosition;
  fd: number;
  next: CommitMark;
  bytesEach: number[][];
  sync: boolean;
  /** The flush's last record: the one named when its fdatasync fails. */
  last: JournalRecord;
  /** The flush's last line, which the next snapshot follows. */
  lastLine: LastLine;
  /** It follows a record that ended the run: the folder's mark is made again once it is on disk. */
  reopened: boolean;
  endsFinal: boolean;
}

/**
 * The last line written (or read, by a repairing load): its record's number and the checksum a
 * snapshot after it names. `differs`: the line holds blob references where the runtime's record
 * holds the payloads (see linked()).
 */
interface LastLine {
  seq: number;
  crc: string;
  differs: boolean;
}

/** Where this process appends; known only after create() or a repairing load(). */
interface AppendPosition {
  fd: number | null;
  markOffset: number;
  /**
   * Everything written so far. The mark on disk counts it only as of the last synced append: a
   * record appended without a sync is not counted until the next synced append makes both
   * durable, so a power loss in between cannot leave a mark counting records the disk lost.
   */
  written: CommitMark;
  /** The last record on disk leaves the run ended: the next append takes it out of its end (markRunsChanged). */
  endsFinal: boolean;
}

/**
 * The store of the run of the folder `dir`, kept in its state folder dir/.durable-agent, where
 * every command finds it with `--dir dir` (a folder named .durable-agent, or one that already
 * holds a run as a state folder does, is its own: see state-folder-of.ts).
 */
export class FileStore implements FolderRunStore {
  /** The run's folder: the state folder of the folder given (RunFolderStore: the folder given). */
  readonly dir: string;
  readonly location: string;
  readonly runId: string | undefined;
  readonly journalPath: string;
  private position: AppendPosition | null = null;
  private lastLine: LastLine | null = null;
  /** Set by a failed fdatasync: no append until the journal is read again. */
  private syncFailure: StoreWriteError | null = null;
  private readonly faults: WriteFaultPlan;
  private readonly lockLeaseMs: number;
  /** The lock this store holds; while it does, every write first checks it was not taken over. */
  private held: HeldLockFile | null = null;
  /** Decisions given from other processes: DIR/decisions/<tool_use_id>.json. */
  readonly decisions: FileDecisionInbox;
  /** Appends made while a grouped fsync is in flight share the next one. */
  private readonly commits = new CommitQueue<PendingUnit, AppendReceipt>((units) => this.flushUnits(units));
  /** Frames the lines of one flush, and its commit mark, in buffers reused from flush to flush. */
  private readonly framer = new LineFramer();
  private readonly markFramer = new CommitMarkFramer();
  /** Cancel and pause requests from other processes: DIR/control/<kind>.json. */
  readonly control: FileControlInbox;
  /** The payloads of images and documents, each kept once in DIR/blobs/ (see blobs.ts). */
  readonly blobs: FileBlobs;
  /** Signals for the run's waits from other processes: DIR/signals/ (see file-signal-inbox.ts). */
  readonly signals: FileSignalInbox;
  /** Seals what this store writes of a sealed run and opens what it reads (run-key.json beside the journal). */
  private readonly sealing: RunSealing;
  private readonly onCreatePoint: ((point: CreatePoint) => void) | undefined;
  private readonly onArchivePoint: ((point: 'journal-moved') => void) | undefined;
  /** Parents of the folders makeDir made, whose new entries the journal's creation makes durable. */
  private readonly foldersToSync: string[] = [];

  constructor(given: string, options: FileStoreOptions = {}) {
    const dir = this.runFolderOf(given);
    this.dir = dir;
    this.location = dir;
    this.runId = options.runId;
    this.journalPath = path.join(dir, JOURNAL_FILE);
    this.faults = new WriteFaultPlan(options.writeFaults);
    this.onCreatePoint = options.onCreatePoint;
    this.onArchivePoint = options.onArchivePoint;
    this.lockLeaseMs = options.lockLeaseMs ?? DEFAULT_LOCK_LEASE_MS;
    // The sealing is made below: the blobs ask it only once a run is created or loaded.
    this.blobs = new FileBlobs(dir, { onBlobWritten: options.onBlobWritten, sealing: () => this.sealing.blobSealing() });
    // What other processes write for a sealed run waits in its inboxes sealed (inbox-content.ts).
    const content: InboxContent = {
      sealerNow: () => (this.sealing.knowsRun() ? this.sealing.contentSealer() : undefined),
      sealer: () => this.inboxSealer(),
      opener: () => this.sealing.contentOpener(),
    };
    this.decisions = new FileDecisionInbox(dir, {
      onPoint: options.onDecisionPoint,
      failWrite: () => this.faults.checkPoint('decision-write') !== null,
      content,
    });
    this.signals = new FileSignalInbox(dir, { content });
    this.sealing = new RunSealing(runKeyFilePlace(dir), options.keys);
    this.control = new FileControlInbox(dir, {
      onPoint: options.onControlPoint,
      failWrite: () => this.faults.checkPoint('control-write') !== null,
      content,
    });
    const { min, max } = LOCK_LEASE_RANGE_MS;
    if (!Number.isInteger(this.lockLeaseMs) || this.lockLeaseMs < min || this.lockLeaseMs > max) {
      throw new RangeError(`lockLeaseMs must be a whole number of milliseconds from ${min} to ${max}, not ${this.lockLeaseMs}`);
    }
  }

  /** Seals runs this store starts, and opens sealed runs it loads, with these keys (a program's StartOptions.keys). */
  giveKeys(keys: KeysGiven): void {
    this.sealing.giveKeys(keys);
  }

  keysGiven(): KeysGiven | undefined {
    return this.sealing.given();
  }

  sealingOfRun(): { sealed: boolean; keyHeld: boolean } {
    return this.sealing.state();
  }

  /**
   * What seals an inbox entry's content: null for a plain run (or none here yet); for a sealed
   * run whose key was not given, the refusal naming it. The run is read first when this store
   * has not read it (a command that writes an entry has, to check it).
   */
  private async inboxSealer(): Promise<ValueSealer | null> {
    if (!this.sealing.knowsRun()) {
      if (!(await this.exists())) return null;
      await this.load({ fromLastSnapshot: true });
    }
    return this.sealing.contentSealer();
  }

  /** Where the run of the folder given is kept: its state folder. Called by the constructor, before any field of a subclass is set. */
  protected runFolderOf(given: string): string {
    return stateFolderOf(given);
  }

  /**
   * Whether a journal is there. A folder this user may not look into is no answer: "no run here"
   * would send another user of the machine looking elsewhere, so it is the permission error
   * `status` gives (StoreAccessError, EACCES), naming the path.
   */
  async exists(): Promise<boolean> {
    try {
      fs.statSync(this.journalPath);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EACCES' && code !== 'EPERM') return false;
      throw environmentProblem(error, `read the journal ${this.journalPath}`, this.journalPath) ?? error;
    }
  }

  /**
   * Without `repair`, a reader that takes no lock: it reads the commit mark first and then what
   * the mark counts (and whole records written after it), so a run being written reads as a
   * consistent prefix. With `repair`, the lock holder's load: a cut-off end is cut off and kept.
   */
  async load(options: LoadOptions = {}): Promise<LoadedRun> {
    if (options.repair) this.held?.assertHeld();
    try {
      return await this.loadJournal(options);
    } catch (error) {
      const action = options.repair ? `read the journal ${this.journalPath} and prepare it for writing` : `read the journal ${this.journalPath}`;
      throw environmentProblem(error, action, this.journalPath) ?? error;
    }
  }

  private async loadJournal(options: LoadOptions): Promise<LoadedRun> {
    checkStateFolder(this.dir);
    let fd: number;
    try {
      fd = openRegularFile(this.journalPath, 'the journal');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new StoreMissingError(this.journalPath, options.repair ? 'resume' : 'read');
      throw error;
    }
    let journal: ReadJournal;
    let tornTail: RecoveredTornTail | null = null;
    try {
      const bytes = fileBytes(fd);
      const read = () =>
        readJournal(this.journalPath, bytes, {
          acceptLostRecord: options.acceptLostRecord === true,
          fromLastSnapshot: options.fromLastSnapshot === true,
          finalRecord: options.finalRecord === true && !this.blobs.any(),
          onHeader: options.checkHeader,
        });
      journal = options.repair ? read() : await readWhileWritten(read, () => snapshotOf(fd));
      if (journal.cutEnd) {
        const cut = journal.cutEnd;
        const keptAt = options.repair && cut.bytes > 0 ? this.keepCutBytes(bytes.read(cut.offset, cut.bytes)) : null;
        tornTail = { offset: cut.offset, bytes: cut.bytes, lostCommittedRecord: cut.lostCommittedRecord, keptAt };
      }
    } finally {
      fs.closeSync(fd);
    }
    // A sealed run's key, before anything is repaired: without it a writer is refused, nothing changed.
    await this.sealing.prepareLoad(journal.header, options.repair === true);
    if (options.repair) {
      this.close();
      // The records read may start at a snapshot: the count is the last one's number + 1.
      const mark = { records: journal.records[journal.records.length - 1]!.record.seq + 1, bytes: journal.goodLength };
      const endsFinal = FINAL_STATES.includes(journal.records[journal.records.length - 1]!.record.state);
      this.position = { fd: openRegularFile(this.journalPath, 'the journal', { write: true }), markOffset: journal.markOffset, written: mark, endsFinal };
      this.syncFailure = null;
      if (journal.cutEnd || journal.mark.records !== mark.records) this.rewriteEnd(mark);
    }
    const records = this.blobs.resolve(this.sealing.openRecords(journal.records), this.journalPath);
    if (options.repair) {
      const last = records.length - 1;
      this.lastLine = { seq: records[last]!.record.seq, crc: journal.records[last]!.crc ?? '', differs: records[last] !== journal.records[last] };
    }
    const contentRefused = this.sealing.contentRefusal();
    return { header: journal.header, records, tornTail, totalBytes: journal.goodLength, ...(contentRefused ? { contentRefused } : {}) };
  }

  async create(header: JournalHeader, first: JournalRecord): Promise<AppendReceipt> {
    const made = await this.sealedHeader(header);
    return this.createJournal(made.header, made.runKey, [first], false);
  }

  /**
   * Creates the journal with its header and these records (a fork's copy of its parent's first
   * records), atomically like create(): a crash leaves the whole journal or none.
   */
  async createWith(header: JournalHeader, records: readonly JournalRecord[]): Promise<AppendReceipt> {
    const made = await this.sealedHeader(header);
    return this.createJournal(made.header, made.runKey, records, true);
  }

  /**
   * With keys given, a new run key, its wrap (createJournal keeps it beside the journal, durable
   * before the journal's name is) and the header naming it.
   */
  private async sealedHeader(header: JournalHeader): Promise<{ header: JournalHeader; runKey: WrappedRunKey | null }> {
    this.held?.assertHeld();
    this.makeDir();
    if (fs.existsSync(this.journalPath)) return { header, runKey: null }; // the journal's link refuses to replace it
    const made = await this.sealing.prepareCreateKeptWith(header);
    return { header: made.header, runKey: made.wrapped };
  }

  private async createJournal(header: JournalHeader, runKey: WrappedRunKey | null, given: readonly JournalRecord[], forked: boolean): Promise<AppendReceipt> {
    this.held?.assertHeld();
    this.makeDir();
    const records = this.sealing.sealRecords(this.withBlobs(given));
    // Decisions left by another run (its journal removed by hand, or a crash between moving it
    // and its decisions to the archive) are never taken for this run's: the scripted model's ids repeat.
    this.archiveDecisions(new Date());
    const head = frameLine(header);
    const lines = records.map((record) => frameLine(record));
    const body = Buffer.concat(lines);
    const markOffset = head.length;
    const mark = { records: records.length, bytes: head.length + frameCommitMark({ records: 0, bytes: 0 }).length + body.length };
    const tmp = `${this.journalPath}.new-${process.pid}`;
    let syncMs = 0;
    try {
      const fd = fs.openSync(tmp, 'w', PRIVATE_FILE);
      try {
        const whole = Buffer.concat([head, frameCommitMark(mark), body]);
        const fault = forked ? this.faults.checkPoint('fork-write') : null;
        if (fault) {
          writeAll(fd, whole, whole.length >> 1, 0);
          throw fault;
        }
        writeAll(fd, whole, whole.length, 0);
        const syncStart = performance.now();
        const newFolders = this.foldersToSync.splice(0);
        if (runKey) await this.keepWhileSynced(fd, runKey, newFolders);
        else {
          // A plain run's creation stays synchronous, as it always was: nothing else of the run interleaves with it.
          for (const folder of newFolders) fsyncDir(folder);
          fs.fsyncSync(fd);
        }
        syncMs = performance.now() - syncStart;
      } finally {
        fs.closeSync(fd);
      }
      this.onCreatePoint?.('journal-temp');
      // A new journal in a folder whose run had ended (archived, or removed by hand) is a run an index saw end no more.
      markRunsChanged(this.dir);
      fs.linkSync(tmp, this.journalPath); // fails with EEXIST rather than replace a journal
      fs.unlinkSync(tmp);
      this.onCreatePoint?.('journal-link');
      fsyncDir(this.dir);
    } catch (error) {
      fs.rmSync(tmp, { force: true });
      throw new StoreWriteError(this.journalPath, forked ? 'the forked run' : 'the new run', error);
    }
    this.close();
    this.position = { fd: null, markOffset, written: mark, endsFinal: FINAL_STATES.includes(records[records.length - 1]!.state) };
    const last = records.length - 1;
    this.lastLine = { seq: records[last]!.seq, crc: lines[last]!.toString('latin1', 0, CHECKSUM_HEX_DIGITS), differs: records[last] !== given[last] };
    return { bytes: body.length, syncMs };
  }

  /**
   * While a sealed run's journal temp file is fsynced in the thread pool, what its name will
   * refer to is made durable too, the waits overlapping: the entries of folders made for this run
   * in their parents (without them a power loss could drop the run folder, journal and all) and
   * the run's key file (temp file, fsync, rename, the folder fsynced). All are over when this
   * resolves, before the journal's name is linked.
   */
  private async keepWhileSynced(fd: number, runKey: WrappedRunKey, newFolders: readonly string[]): Promise<void> {
    const journalSynced = fsync(fd);
    try {
      for (const folder of newFolders) fsyncDir(folder);
      writeRunKeyFile(this.dir, runKey);
      this.onCreatePoint?.('run-key');
    } catch (error) {
      // The caller closes the file: not under an fsync still running.
      await journalSynced.catch(() => undefined);
      throw error;
    }
    await journalSynced;
  }

  async append(record: JournalRecord, options: AppendOptions = {}): Promise<AppendReceipt> {
    return this.appendBatch([record], options);
  }

  /**
   * The records are written after the last one in one piece, each but the last saying how many
   * of the unit follow it (`more`), so a reader takes the unit whole or not at all; then the
   * commit mark is rewritten to count them and one fdatasync makes all of it durable.
   */
  async appendBatch(records: readonly JournalRecord[], options: AppendOptions = {}): Promise<AppendReceipt> {
    const unit = { records: this.sealing.sealRecords(this.withBlobs(records)), given: records, sync: options.sync !== false };
    if (!options.groupCommit && !this.commits.busy) return this.flushNow(unit);
    return this.commits.submit(unit);
  }

  /** The records with their large payloads in blobs, written and synced first: nothing of the records is written if that fails. */
  private withBlobs(records: readonly JournalRecord[]): readonly JournalRecord[] {
    try {
      return this.blobs.externalize(records);
    } catch (error) {
      throw new StoreWriteError(this.blobs.dir, `a blob of ${describeRecord(records[0]!)}`, error);
    }
  }

  /** Writes one unit and, when it syncs, waits for the disk in place (fdatasyncSync). */
  private flushNow(unit: PendingUnit): AppendReceipt {
    const flush = this.writeUnits([unit]);
    let syncMs: number | undefined;
    if (flush.sync) {
      const syncStart = performance.now();
      try {
        fs.fdatasyncSync(flush.fd);
      } catch (error) {
        throw this.syncFailed(flush.position, flush.last, error);
      }
      syncMs = performance.now() - syncStart;
    }
    return this.committed(flush, syncMs)[0]!;
  }

  /** A group commit's flush: the units in order, one mark, one fdatasync awaited without blocking. */
  private async flushUnits(units: readonly PendingUnit[]): Promise<AppendReceipt[]> {
    const flush = this.writeUnits(units);
    let syncMs: number | undefined;
    if (flush.sync) {
      const syncStart = performance.now();
      try {
        await fdatasync(flush.fd);
      } catch (error) {
        throw this.syncFailed(flush.position, flush.last, error);
      }
      syncMs = performance.now() - syncStart;
    }
    return this.committed(flush, syncMs);
  }

  /** Writes the units' lines after the last one and, with a sync among them, the mark that counts them. */
  private writeUnits(units: readonly PendingUnit[]): Flush {
    const position = this.position;
    if (!position) throw new Error('FileStore.append before create() or load({ repair: true })');
    if (this.syncFailure) throw this.syncFailure;
    this.held?.assertHeld();
    // Marked before the write (a kill after it leaves the mark) and again after it (a reader that
    // looked between the two saw the run ended, and the second mark tells it that is past).
    const reopened = position.endsFinal;
    if (reopened) markRunsChanged(this.dir);
    // Every line of the flush is framed into one buffer, written before anything else is framed.
    const framer = this.framer;
    framer.reset();
    const bytesEach: number[][] = [];
    let count = 0;
    let sync = false;
    let lastLine = this.lastLine;
    for (let unitIndex = 0; unitIndex < units.length; unitIndex++) {
      const { records, given } = units[unitIndex]!;
      const each: number[] = [];
      const last = records.length - 1;
      for (let index = 0; index <= last; index++) {
        const start = framer.length;
        each.push(framer.frame(unitRecord(linked(records[index]!, lastLine), last - index)));
        lastLine = { seq: records[index]!.seq, crc: framer.buffer.toString('latin1', start, start + CHECKSUM_HEX_DIGITS), differs: records[index] !== given[index] };
      }
      bytesEach.push(each);
      count += each.length;
      sync ||= units[unitIndex]!.sync;
    }
    const length = framer.length;
    const next = { records: position.written.records + count, bytes: position.written.bytes + length };
    let failed: JournalRecord = units[0]!.records[0]!;
    try {
      position.fd ??= fs.openSync(this.journalPath, 'r+');
      const at = position.written.bytes;
      let lineStart = 0;
      for (let unitIndex = 0; unitIndex < units.length; unitIndex++) {
        const { records } = units[unitIndex]!;
        for (let index = 0; index < records.length; index++) {
          failed = records[index]!;
          const lineBytes = bytesEach[unitIndex]![index]!;
          const fault = this.faults.check(failed);
          if (fault) {
            writeAll(position.fd, framer.buffer, lineStart + (lineBytes >> 1), at);
            throw fault;
          }
          lineStart += lineBytes;
        }
      }
      writeAll(position.fd, framer.buffer, length, at);
      if (sync) {
        const mark = this.markFramer.frame(next);
        writeAll(position.fd, mark, mark.length, position.markOffset);
      }
      const lastUnit = units[units.length - 1]!.records;
      const endsFinal = FINAL_STATES.includes(lastUnit[lastUnit.length - 1]!.state);
      return { position, fd: position.fd, next, bytesEach, sync, last: failed, lastLine: lastLine!, reopened, endsFinal };
    } catch (error) {
      throw this.writeFailed(position, failed, error);
    } finally {
      framer.reset();
    }
  }

  /** The flush is on disk (and durable, if it synced): the next append follows it. */
  private committed(flush: Flush, syncMs: number | undefined): AppendReceipt[] {
    flush.position.written = flush.next;
    flush.position.endsFinal = flush.endsFinal;
    if (flush.reopened) markRunsChanged(this.dir);
    this.lastLine = flush.lastLine;
    return flush.bytesEach.map((each) => {
      let bytes = 0;
      for (const n of each) bytes += n;
      return { bytes, bytesEach: each, syncMs };
    });
  }

  /** Undoes what a failed write may have left, and says which record's write failed. */
  private writeFailed(position: AppendPosition, record: JournalRecord, error: unknown): StoreWriteError {
    this.undoPartialWrite(position);
    return new StoreWriteError(this.journalPath, describeRecord(record), error);
  }

  /**
   * A failed fdatasync: what the disk holds is unknown (the kernel may have dropped the pages and
   * cleared the error, so that a second fsync would succeed and prove nothing). Every later append
   * is refused with the same error: only a new load, which reads the disk, may write again.
   */
  private syncFailed(position: AppendPosition, record: JournalRecord, error: unknown): StoreWriteError {
    this.undoPartialWrite(position);
    this.syncFailure = new StoreWriteError(this.journalPath, describeRecord(record), error, true);
    return this.syncFailure;
  }

  async lock(options: LockOptions = {}): Promise<RunLock> {
    this.makeDir();
    // Loaded here: a store opened to be read (status, history, a viewer) takes no lock.
    const { acquireLockFile } = await import('./lock-file.ts');
    const held = await acquireLockFile(path.join(this.dir, 'lock'), this.dir, { ...options, leaseMs: this.lockLeaseMs, faults: this.faults });
    this.held = held;
    return {
      holder: held.holder,
      takenOver: held.takenOver,
      release: async () => {
        if (this.held === held) this.held = null;
        await held.release();
      },
    };
  }

  /** Throws RunLockLostError once another process took this store's lock over. */
  async assertOwnership(): Promise<void> {
    this.held?.assertHeld();
  }

  async archive(): Promise<string> {
    const archiveDir = path.join(this.dir, 'archive');
    const now = new Date();
    const target = path.join(archiveDir, `journal-${stampOf(now)}.jsonl`);
    this.close();
    let keyed = false;
    inEnvironment(`move the journal ${this.journalPath} to ${archiveDir}`, archiveDir, () => {
      fs.mkdirSync(archiveDir, { recursive: true, mode: PRIVATE_DIR });
      keyed = linkRunKeyFileTo(this.dir, path.join(archiveDir, `journal-${stampOf(now)}.run-key.json`));
      fs.renameSync(this.journalPath, target);
      fsyncDir(archiveDir);
      fsyncDir(this.dir);
    });
    this.position = null;
    this.onArchivePoint?.('journal-moved');
    if (keyed) dropArchivedRunKeyFile(this.dir);
    this.sealing.forget();
    this.archiveDecisions(now);
    this.archiveInbox(this.signals.dir, 'signals', now);
    // A cancel or pause asked of the archived run is not one for the next run.
    for (const kind of CONTROL_KINDS) await this.control.settle(kind);
    return target;
  }

  /** Moves the inbox of decisions, if it holds any, to archive/decisions-<time>: they belong to the run that was there. */
  private archiveDecisions(now: Date): void {
    this.archiveInbox(this.decisions.dir, 'decisions', now);
  }

  /** Moves an inbox, if it holds anything, to archive/<words>-<time>. */
  private archiveInbox(inbox: string, words: string, now: Date): void {
    if (!fs.existsSync(inbox) || fs.readdirSync(inbox).length === 0) return;
    const archiveDir = path.join(this.dir, 'archive');
    inEnvironment(`move the ${words} ${inbox} to ${archiveDir}`, archiveDir, () => {
      fs.mkdirSync(archiveDir, { recursive: true, mode: PRIVATE_DIR });
      fs.renameSync(inbox, path.join(archiveDir, `${words}-${stampOf(now)}`));
      fsyncDir(archiveDir);
      fsyncDir(this.dir);
    });
  }

  private makeDir(): void {
    inEnvironment(`create the run's directory ${this.dir}`, this.dir, () => {
      // The folder that holds it is the user's (its mode theirs); only the state folder is made private.
      const madeAbove = fs.mkdirSync(path.dirname(this.dir), { recursive: true });
      const madeHere = fs.mkdirSync(this.dir, { recursive: true, mode: PRIVATE_DIR });
      const first = madeAbove ?? madeHere;
      if (first === undefined) return;
      // Each folder made here is named in its parent: those parents are synced with the journal's creation.
      for (let folder = this.dir; folder !== path.dirname(first); folder = path.dirname(folder)) this.foldersToSync.push(path.dirname(folder));
    });
    checkStateFolder(this.dir);
  }

  close(): void {
    if (this.position?.fd != null) fs.closeSync(this.position.fd);
    this.position = null;
  }

  /** A failed write may have left part of a record: cut it off so the next one starts clean. */
  private undoPartialWrite(position: AppendPosition): void {
    try {
      if (position.fd !== null) this.rewriteEnd(position.written);
    } catch {
      // If even that fails, the next load sees a cut-off end, which it recovers from.
    }
  }

  /** Makes the file end where the mark says, durably. */
  private rewriteEnd(mark: CommitMark): void {
    const position = this.position!;
    position.fd ??= fs.openSync(this.journalPath, 'r+');
    fs.ftruncateSync(position.fd, mark.bytes);
    const framed = frameCommitMark(mark);
    writeAll(position.fd, framed, framed.length, position.markOffset);
    fs.fsyncSync(position.fd);
  }

  /** Keeps the cut-off bytes beside the journal: nothing the user ran is thrown away. */
  private keepCutBytes(cutBytes: Buffer): string {
    const keptAt = `${this.journalPath}.cut-${Date.now()}`;
    const fd = fs.openSync(keptAt, 'w', PRIVATE_FILE);
    try {
      writeAll(fd, cutBytes, cutBytes.length, 0);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fsyncDir(this.dir);
    return keptAt;
  }
}

/**
 * The journal's bytes as the reader asks for them: a piece at a time, never the whole file at
 * once. The length is the file's at the moment it is asked (see JournalBytes.length).
 */
export function fileBytes(fd: number): JournalBytes {
  return {
    get length() {
      return fs.fstatSync(fd).size;
    },
    read(start, want) {
      const piece = Buffer.allocUnsafe(Math.max(0, want));
      let done = 0;
      while (done < piece.length) {
        const read = fs.readSync(fd, piece, done, piece.length - done, start + done);
        if (read === 0) break;
        done += read;
      }
      return piece.subarray(0, done);
    },
  };
}

/** What changes when a writer appends: the file's size and time, the header and commit mark. */
function snapshotOf(fd: number): Buffer {
  const stat = fs.fstatSync(fd, { bigint: true });
  // Only the bytes read are kept: the rest need not be zeroed first.
  const head = Buffer.allocUnsafe(SNAPSHOT_HEAD_BYTES);
  const read = fs.readSync(fd, head, 0, head.length, 0);
  return Buffer.concat([Buffer.from(`${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}:`), head.subarray(0, read)]);
}

/** Enough to hold a header (tool names and all) and the commit mark after it. */
const SNAPSHOT_HEAD_BYTES = 64 * 1024;

/**
 * A snapshot names the record before it by the checksum of its line. The runtime computes it
 * from the record it handed over; where that line holds blob references instead of the payloads
 * (this store put them there), the checksum is that of the line as written.
 */
function linked(record: JournalRecord, lastLine: LastLine | null): JournalRecord {
  const after = record.snapshot?.after;
  if (!after || !lastLine?.differs || after.seq !== lastLine.seq || after.crc === lastLine.crc) return record;
  return { ...record, snapshot: { ...record.snapshot!, after: { seq: after.seq, crc: lastLine.crc } } };
}

/** A record as its unit's line holds it: `more` > 0 for a record that the next ones of its unit follow. */
function unitRecord(record: JournalRecord, more: number): JournalRecord {
  return more > 0 ? { ...record, more } : record;
}

function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}

function fsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve())));
}

/** Writes the first `length` bytes of `buffer` at `position` (a buffer reused from flush to flush holds more). */
function writeAll(fd: number, buffer: Buffer, length: number, position: number): void {
  let offset = 0;
  while (offset < length) {
    offset += fs.writeSync(fd, buffer, offset, length - offset, position + offset);
  }
}


function stampOf(date: Date): string {
  return date.toISOString().replace(/[:.]/g, '-');
}

function describeRecord(record: JournalRecord): string {
  return `${describePoint(pointOf(record))} (record ${record.seq}, state ${record.state})`;
}

/** The store of the run kept in exactly the folder given: a state folder's own run, or one run's folder in a folder of runs. */
export class RunFolderStore extends FileStore {
  protected override runFolderOf(given: string): string {
    return given;
  }
}
