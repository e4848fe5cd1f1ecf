/**
 * The embedded store: one append-only journal file per run directory.
 *
 * Durability: every record is written with one write and made durable with fdatasync before
 * append() resolves; the journal is created complete (header + first record) in a temporary
 * file, fsynced, linked into place (which fails if a journal exists) and the directory fsynced.
 */
import fs from 'node:fs';
import path from 'node:path';
import { StoreCorruptError, StoreMissingError, StoreWriteError } from './errors.ts';
import { FrameError, frameLine, parseFrames } from './framing.ts';
import { journalFromFrames } from './journal-reader.ts';
import type { JournalHeader, JournalRecord } from './journal-record.ts';
import { acquireLockFile } from './lock-file.ts';
import { pointOf } from './record-points.ts';
import type { AppendReceipt, LoadedRun, LoadOptions, RecoveredTornTail, RunLock, RunStore } from './store.ts';
import { WriteFaultPlan } from './write-faults.ts';

export interface FileStoreOptions {
  /** Armed write failures (tests and drills), e.g. "effect-write:3". */
  writeFaults?: string;
}

export const JOURNAL_FILE = 'journal.jsonl';

export class FileStore implements RunStore {
  readonly location: string;
  readonly journalPath: string;
  private fd: number | null = null;
  /** Length of the journal's intact prefix as this process knows it; appends start there. */
  private goodLength = -1;
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
    let buffer: Buffer;
    try {
      buffer = fs.readFileSync(this.journalPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new StoreMissingError(this.journalPath);
      throw error;
    }
    let framed;
    try {
      framed = parseFrames(buffer);
    } catch (error) {
      if (error instanceof FrameError) throw new StoreCorruptError(this.journalPath, error.line, error.offset, error.problem);
      throw error;
    }
    const { header, records } = journalFromFrames(this.journalPath, framed);
    let tornTail: RecoveredTornTail | null = null;
    if (framed.tornTail) {
      tornTail = { ...framed.tornTail, keptAt: options.repair ? this.cutTornTail(buffer, framed.goodLength) : null };
    }
    if (options.repair || this.goodLength >= 0) this.goodLength = framed.goodLength;
    return { header, records, tornTail, totalBytes: framed.goodLength };
  }

  async create(header: JournalHeader, first: JournalRecord): Promise<AppendReceipt> {
    fs.mkdirSync(this.dir, { recursive: true });
    const head = frameLine(header);
    const body = frameLine(first);
    const tmp = `${this.journalPath}.new-${process.pid}`;
    try {
      const fd = fs.openSync(tmp, 'w');
      try {
        writeAll(fd, Buffer.concat([head, body]));
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
    this.goodLength = head.length + body.length;
    return { bytes: body.length };
  }

  async append(record: JournalRecord): Promise<AppendReceipt> {
    if (this.goodLength < 0) throw new Error('FileStore.append before load({ repair: true }) or create()');
    const line = frameLine(record);
    try {
      const fd = this.openForAppend();
      const fault = this.faults.check(record);
      if (fault) {
        writeAll(fd, line.subarray(0, line.length >> 1));
        throw fault;
      }
      writeAll(fd, line);
      fs.fdatasyncSync(fd);
    } catch (error) {
      this.undoPartialWrite();
      throw new StoreWriteError(this.journalPath, describeRecord(record), error);
    }
    this.goodLength += line.length;
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
    this.goodLength = -1;
    return target;
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  private openForAppend(): number {
    this.fd ??= fs.openSync(this.journalPath, 'a');
    return this.fd;
  }

  /** A failed write may have left part of a line: cut it off so the next record starts clean. */
  private undoPartialWrite(): void {
    try {
      if (this.fd !== null) {
        fs.ftruncateSync(this.fd, this.goodLength);
        fs.fdatasyncSync(this.fd);
      }
    } catch {
      // If even that fails the next load will see a torn tail, which it recovers from.
    }
  }

  /** Keeps the torn bytes beside the journal (nothing is thrown away) and cuts them off. */
  private cutTornTail(buffer: Buffer, goodLength: number): string {
    const keptAt = `${this.journalPath}.torn-${Date.now()}`;
    fs.writeFileSync(keptAt, buffer.subarray(goodLength));
    const fd = fs.openSync(this.journalPath, 'r+');
    try {
      fs.ftruncateSync(fd, goodLength);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fsyncDir(this.dir);
    return keptAt;
  }
}

function writeAll(fd: number, buffer: Buffer): void {
  let offset = 0;
  while (offset < buffer.length) offset += fs.writeSync(fd, buffer, offset, buffer.length - offset);
}

function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function describeRecord(record: JournalRecord): string {
  const point = pointOf(record);
  const what =
    point === 'effect-write' ? 'the ledger entry' : point === 'save-a' ? 'checkpoint A' : point === 'save-b' ? 'checkpoint B' : point;
  return `${what} (record ${record.seq}, state ${record.state})`;
}
