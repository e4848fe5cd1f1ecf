/**
 * The embedded store: one append-only journal file per run directory.
 *
 * Layout: a header line, a fixed-width commit mark, then one checksummed record per line.
 * Durability: a record is written after the last one, the commit mark is rewritten in place
 * to count it, and one fdatasync makes both durable before append() resolves. A record
 * appended without a sync (a reply's token count) is counted by the next synced append. The
 * journal is created complete (header, mark, first record) in a temporary file, fsynced,
 * linked into place (which fails if a journal exists) and the directory fsynced.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fsyncDir } from '../util/durable-file.ts';
import { StoreMissingError, StoreWriteError } from './errors.ts';
import { type CommitMark, frameCommitMark, frameLine } from './framing.ts';
import type { JournalHeader, JournalRecord } from './journal-record.ts';
import { type JournalBytes, type ReadJournal, readJournal } from './journal-reader.ts';
import { acquireLockFile } from './lock-file.ts';
import { pointOf } from './record-points.ts';
import type { AppendOptions, AppendReceipt, LoadedRun, LoadOptions, RecoveredTornTail, RunLock, RunStore } from './store.ts';
import { WriteFaultPlan } from './write-faults.ts';

export interface FileStoreOptions {
  /** Armed write failures (tests and drills), e.g. "effect-write:3". */
  writeFaults?: string | undefined;
}

export const JOURNAL_FILE = 'journal.jsonl';

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
}

export class FileStore implements RunStore {
  readonly location: string;
  readonly journalPath: string;
  private position: AppendPosition | null = null;
  private readonly faults: WriteFaultPlan;

  constructor(
    readonly dir: string,
    options: FileStoreOptions = {},
  ) {
    this.location = dir;
    this.journalPath = path.join(dir, JOURNAL_FILE);
    this.faults = new WriteFaultPlan(options.writeFaults);
  }

  async exists(): Promise<boolean> {
    return fs.existsSync(this.journalPath);
  }

  async load(options: LoadOptions = {}): Promise<LoadedRun> {
    let fd: number;
    try {
      fd = fs.openSync(this.journalPath, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new StoreMissingError(this.journalPath);
      throw error;
    }
    let journal: ReadJournal;
    let tornTail: RecoveredTornTail | null = null;
    try {
      const bytes = fileBytes(fd);
      journal = readJournal(this.journalPath, bytes);
      if (journal.cutEnd) {
        const cut = journal.cutEnd;
        const keptAt = options.repair && cut.bytes > 0 ? this.keepCutBytes(bytes.read(journal.goodLength, bytes.length - journal.goodLength)) : null;
        tornTail = { offset: cut.offset, bytes: cut.bytes, lostCommittedRecord: cut.lostCommittedRecord, keptAt };
      }
    } finally {
      fs.closeSync(fd);
    }
    if (options.repair) {
      this.close();
      const mark = { records: journal.records.length, bytes: journal.goodLength };
      this.position = { fd: fs.openSync(this.journalPath, 'r+'), markOffset: journal.markOffset, written: mark };
      if (journal.cutEnd || journal.mark.records !== mark.records) this.rewriteEnd(mark);
    }
    return { header: journal.header, records: journal.records, tornTail, totalBytes: journal.goodLength };
  }

  async create(header: JournalHeader, first: JournalRecord): Promise<AppendReceipt> {
    fs.mkdirSync(this.dir, { recursive: true });
    const head = frameLine(header);
    const body = frameLine(first);
    const markOffset = head.length;
    const mark = { records: 1, bytes: head.length + frameCommitMark({ records: 0, bytes: 0 }).length + body.length };
    const tmp = `${this.journalPath}.new-${process.pid}`;
    try {
      const fd = fs.openSync(tmp, 'w');
      try {
        writeAll(fd, Buffer.concat([head, frameCommitMark(mark), body]), 0);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.linkSync(tmp, this.journalPath); // fails with EEXIST rather than replace a journal
      fs.unlinkSync(tmp);
      fsyncDir(this.dir);
    } catch (error) {
      fs.rmSync(tmp, { force: true });
      throw new StoreWriteError(this.journalPath, 'the new run', error);
    }
    this.close();
    this.position = { fd: null, markOffset, written: mark };
    return { bytes: body.length };
  }

  async append(record: JournalRecord, options: AppendOptions = {}): Promise<AppendReceipt> {
    const position = this.position;
    if (!position) throw new Error('FileStore.append before create() or load({ repair: true })');
    const line = frameLine(record);
    const next = { records: position.written.records + 1, bytes: position.written.bytes + line.length };
    try {
      position.fd ??= fs.openSync(this.journalPath, 'r+');
      const fault = this.faults.check(record);
      if (fault) {
        writeAll(position.fd, line.subarray(0, line.length >> 1), position.written.bytes);
        throw fault;
      }
      writeAll(position.fd, line, position.written.bytes);
      if (options.sync !== false) {
        writeAll(position.fd, frameCommitMark(next), position.markOffset);
        fs.fdatasyncSync(position.fd);
      }
    } catch (error) {
      this.undoPartialWrite(position);
      throw new StoreWriteError(this.journalPath, describeRecord(record), error);
    }
    position.written = next;
    return { bytes: line.length };
  }

  async lock(): Promise<RunLock> {
    fs.mkdirSync(this.dir, { recursive: true });
    return acquireLockFile(path.join(this.dir, 'lock'), this.dir);
  }

  async archive(): Promise<string> {
    const archiveDir = path.join(this.dir, 'archive');
    fs.mkdirSync(archiveDir, { recursive: true });
    const target = path.join(archiveDir, `journal-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`);
    this.close();
    fs.renameSync(this.journalPath, target);
    fsyncDir(archiveDir);
    fsyncDir(this.dir);
    this.position = null;
    return target;
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
    writeAll(position.fd, frameCommitMark(mark), position.markOffset);
    fs.fsyncSync(position.fd);
  }

  /** Keeps the cut-off bytes beside the journal: nothing the user ran is thrown away. */
  private keepCutBytes(cutBytes: Buffer): string {
    const keptAt = `${this.journalPath}.cut-${Date.now()}`;
    const fd = fs.openSync(keptAt, 'w');
    try {
      writeAll(fd, cutBytes, 0);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fsyncDir(this.dir);
    return keptAt;
  }
}

/** The journal's bytes as the reader asks for them: a piece at a time, never the whole file at once. */
function fileBytes(fd: number): JournalBytes {
  const length = fs.fstatSync(fd).size;
  return {
    length,
    read(start, want) {
      const piece = Buffer.allocUnsafe(Math.max(0, Math.min(want, length - start)));
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

function writeAll(fd: number, buffer: Buffer, position: number): void {
  let offset = 0;
  while (offset < buffer.length) {
    offset += fs.writeSync(fd, buffer, offset, buffer.length - offset, position + offset);
  }
}


function describeRecord(record: JournalRecord): string {
  const point = pointOf(record);
  const what =
    point === 'effect-write' ? 'the ledger entry' : point === 'save-a' ? 'checkpoint A' : point === 'save-b' ? 'checkpoint B' : point;
  return `${what} (record ${record.seq}, state ${record.state})`;
}
