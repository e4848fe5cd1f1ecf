/**
 * The lesson's approach, as a RunStore, for the benchmark to compare against: a checkpoint file
 * holding the whole run (every message, every tool result) rewritten at checkpoint A, at
 * checkpoint B and at every other checkpoint, and a ledger file holding every tool outcome of
 * the run, rewritten whole at each new entry. Each rewrite is atomic the usual way: write a
 * temporary file, fsync it, rename it over the old one, fsync the directory.
 *
 * It receives the runtime's delta records and folds them into the full state in memory (with
 * the journal codec), so the loop it serves is exactly ours; only what reaches the disk differs.
 * It is a correct store (a run killed anywhere resumes from it), just one whose cost per
 * checkpoint grows with the length of the run.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AgentContext, AgentStateName, ToolOutcome } from '../machines/agent-loop.types.ts';
import { StoreMissingError, StoreWriteError } from '../src/store/errors.ts';
import { applyRecord, type DurableView, encodeRecord, ledgerEntriesOf } from '../src/store/journal/journal-codec.ts';
import type { JournalHeader, JournalRecord } from '../src/store/journal/journal-record.ts';
import { acquireLockFile } from '../src/store/lock-file.ts';
import type { AppendOptions, AppendReceipt, LoadedRun, RunLock, RunStore, StoredRecord } from '../src/store/store.ts';
import { fsyncDir, writeFileDurably } from '../src/util/durable-file.ts';

interface CheckpointFile {
  header: JournalHeader;
  at: number;
  state: AgentStateName;
  context: AgentContext;
}

export class NaiveStore implements RunStore {
  readonly location: string;
  private readonly checkpointPath: string;
  private readonly ledgerPath: string;
  private header: JournalHeader | null = null;
  private view: DurableView | null = null;
  /** Every outcome of the run, in the order recorded: the ledger file's content. */
  private ledger: ToolOutcome[] = [];

  constructor(readonly dir: string) {
    this.location = dir;
    this.checkpointPath = path.join(dir, 'checkpoint.json');
    this.ledgerPath = path.join(dir, 'ledger.json');
  }

  async exists(): Promise<boolean> {
    return fs.existsSync(this.checkpointPath);
  }

  async create(header: JournalHeader, first: JournalRecord): Promise<AppendReceipt> {
    if (await this.exists()) throw new StoreWriteError(this.checkpointPath, 'the new run', new Error('a run already exists'));
    fs.mkdirSync(this.dir, { recursive: true });
    this.header = header;
    this.view = applyRecord(null, first);
    this.ledger = [];
    return { bytes: this.writeCheckpoint(first.at) };
  }

  async append(record: JournalRecord, options: AppendOptions = {}): Promise<AppendReceipt> {
    if (!this.view) throw new Error('NaiveStore.append before create() or load()');
    this.view = applyRecord(this.view, record);
    // A ledger entry is always written, even the turn's last (which our journal writes without its
    // own fsync, checkpoint B syncing it): this store has no record that carries it otherwise.
    const entries = ledgerEntriesOf(record);
    if (record.event === 'TOOL_RESULT' && entries.length > 0) {
      this.ledger.push(...entries);
      return { bytes: this.rewrite(this.ledgerPath, this.ledger, 'the ledger') };
    }
    // Bookkeeping the runtime does not wait for (a reply's token count) reaches the disk with the
    // next checkpoint: rewriting the whole run for it would make the baseline look worse than it is.
    if (options.sync === false) return { bytes: 0 };
    return { bytes: this.writeCheckpoint(record.at) };
  }

  /**
   * Rebuilds records the runtime can fold: one holding the whole checkpoint, then one per
   * ledger entry of the checkpoint's open turn that was recorded after it (what a resume must
   * reuse rather than run again).
   */
  async load(): Promise<LoadedRun> {
    const checkpoint = readJson<CheckpointFile>(this.checkpointPath);
    if (!checkpoint) throw new StoreMissingError(this.location);
    const ledger = readJson<ToolOutcome[]>(this.ledgerPath) ?? [];
    const { header, at, state, context } = checkpoint;
    const records: JournalRecord[] = [encodeRecord(null, { seq: 0, at, event: 'START', state, context })];
    const open = new Set(context.pending.map((call) => call.id));
    const results = context.results.slice();
    for (const entry of ledger) {
      if (!open.has(entry.tool_use_id) || results.some((r) => r.tool_use_id === entry.tool_use_id)) continue;
      records.push({ seq: records.length, at, state: 'effectRecorded', event: 'TOOL_RESULT', results: { from: results.length, add: [entry] } });
      results.push(entry);
    }
    let view: DurableView | null = null;
    for (const record of records) view = applyRecord(view, record);
    this.header = header;
    this.view = view;
    this.ledger = ledger;
    const stored: StoredRecord[] = records.map((record, index) => ({ record, bytes: 0, offset: index }));
    return { header, records: stored, tornTail: null, totalBytes: 0 };
  }

  async lock(): Promise<RunLock> {
    fs.mkdirSync(this.dir, { recursive: true });
    return acquireLockFile(path.join(this.dir, 'lock'), this.dir);
  }

  async archive(): Promise<string> {
    const target = path.join(this.dir, 'archive', `run-${Date.now()}`);
    fs.mkdirSync(target, { recursive: true });
    for (const file of [this.checkpointPath, this.ledgerPath]) {
      if (fs.existsSync(file)) fs.renameSync(file, path.join(target, path.basename(file)));
    }
    fsyncDir(this.dir);
    this.header = null;
    this.view = null;
    this.ledger = [];
    return target;
  }

  private writeCheckpoint(at: number): number {
    const view = this.view!;
    const checkpoint: CheckpointFile = { header: this.header!, at, state: view.state, context: view.context };
    return this.rewrite(this.checkpointPath, checkpoint, `the checkpoint (${view.state})`);
  }

  /** Replaces a whole file atomically and durably: tmp, fsync, rename, fsync the directory. */
  private rewrite(file: string, document: unknown, what: string): number {
    const json = JSON.stringify(document);
    try {
      writeFileDurably(file, json);
    } catch (error) {
      throw new StoreWriteError(file, what, error);
    }
    return Buffer.byteLength(json);
  }
}

function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
