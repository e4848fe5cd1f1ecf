/**
 * The index of a folder of runs (DIR/.durable-agent/runs-index.json): each run folder's
 * summaries as they were read from its journals, under the folder's signature then (its
 * journal's inode, size and time, its control inbox's and its archive's times). A listing takes
 * a folder's summaries from the index only while the signature is the same, and reads the
 * journals of any other folder again, so the index is never believed over a journal: a record
 * appended, a journal moved in, a pause asked each change the signature. A summary with a
 * problem (an unreadable journal) is never kept: it is read again each time.
 *
 * The file is written whole, to a temp file of the writer's own, synced, then renamed over the
 * index: a reader sees the old index or the new one, never a part, whichever process wrote last
 * and wherever a kill fell. An index that is missing, damaged or of another version is no index:
 * every journal is read, and the index written again from them.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { STATE_DIR } from '../store/state-folder-of.ts';
import { CONTROL_DIR, JOURNAL_FILE } from '../store/open-store.ts';
import type { RunSummary } from './run-summary.ts';

export const RUNS_INDEX_FILE = 'runs-index.json';
export const ARCHIVE_DIR = 'archive';
const VERSION = 1;
/** A temp file left by a writer killed before its rename is removed by a later writer once it is this old. */
const STALE_TEMP_MS = 60_000;

/** A run of a folder as the index keeps it: its summary but where it lives, which the reader knows. */
export interface IndexedRun {
  /** The archived journal's file name (journal-….jsonl); null for the folder's current run. */
  archivedJournal: string | null;
  summary: Omit<RunSummary, 'location'>;
}

interface IndexedFolder {
  signature: string;
  runs: IndexedRun[];
}

/**
 * What changes when one of a run folder's summaries may: its journal (a record, a new journal
 * moved in), its control inbox (a pause asked or taken back) and its archive (a run moved aside).
 */
export function runFolderSignature(dir: string): string {
  const journal = fs.statSync(path.join(dir, JOURNAL_FILE), { throwIfNoEntry: false });
  const control = fs.statSync(path.join(dir, CONTROL_DIR), { throwIfNoEntry: false });
  const archive = fs.statSync(path.join(dir, ARCHIVE_DIR), { throwIfNoEntry: false });
  return `${journal ? `${journal.ino}:${journal.size}:${journal.mtimeMs}` : '-'}|${control?.mtimeMs ?? '-'}|${archive?.mtimeMs ?? '-'}`;
}

export class RunsIndex {
  private changed = false;

  private constructor(
    /** The state folder (DIR/.durable-agent). */
    readonly stateFolder: string,
    private readonly folders: Map<string, IndexedFolder>,
    /** An index file was there: it is kept up to date wherever it is. */
    private readonly existed: boolean,
  ) {}

  /** The index as the file holds it; empty when there is none, or it cannot be read as one. */
  static load(stateFolder: string): RunsIndex {
    const folders = new Map<string, IndexedFolder>();
    const existed = fs.existsSync(path.join(stateFolder, RUNS_INDEX_FILE));
    try {
      const data = JSON.parse(fs.readFileSync(path.join(stateFolder, RUNS_INDEX_FILE), 'utf8')) as { version?: unknown; folders?: unknown };
      if (data.version === VERSION && typeof data.folders === 'object' && data.folders !== null) {
        for (const [id, folder] of Object.entries(data.folders as Record<string, IndexedFolder>)) {
          if (typeof folder?.signature === 'string' && Array.isArray(folder.runs)) folders.set(id, folder);
        }
      }
    } catch {
      // Missing or damaged: no index. The journals are read, and the index written again from them.
    }
    return new RunsIndex(stateFolder, folders, existed);
  }

  /** A run folder's runs ('' for the state folder's own), if its signature is still the one they were read under. */
  get(folderId: string, signature: string): readonly IndexedRun[] | undefined {
    const folder = this.folders.get(folderId);
    return folder?.signature === signature ? folder.runs : undefined;
  }

  /** A run folder's runs as just read; a folder with a run that could not be read is not kept. */
  set(folderId: string, signature: string, runs: readonly IndexedRun[]): void {
    if (runs.some((run) => run.summary.problem !== null)) {
      this.forget(folderId);
      return;
    }
    const kept = this.folders.get(folderId);
    if (kept?.signature === signature && kept.runs.length === runs.length) return;
    this.folders.set(folderId, { signature, runs: runs.map((run) => ({ archivedJournal: run.archivedJournal, summary: { ...run.summary, children: null } })) });
    this.changed = true;
  }

  forget(folderId: string): void {
    if (this.folders.delete(folderId)) this.changed = true;
  }

  /** Drops the folders not among these (runs removed). */
  keepOnly(folderIds: ReadonlySet<string>): void {
    for (const id of [...this.folders.keys()]) if (!folderIds.has(id)) this.forget(id);
  }

  /**
   * Writes the index if it changed: a temp file of this writer's own, synced, renamed over the
   * index. A folder that cannot be written (read-only, full) keeps its old index: it is a cache.
   * One is made only in a state folder of the command line's (DIR/.durable-agent): a folder a
   * program named for its runs itself is read as it is, nothing written in it, unless it has one.
   */
  save(): void {
    if (!this.changed || !fs.existsSync(this.stateFolder)) return;
    if (!this.existed && path.basename(this.stateFolder) !== STATE_DIR) return;
    const file = path.join(this.stateFolder, RUNS_INDEX_FILE);
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      const fd = fs.openSync(temp, 'w', 0o600);
      try {
        fs.writeSync(fd, JSON.stringify({ version: VERSION, folders: Object.fromEntries(this.folders) }));
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(temp, file);
      this.changed = false;
    } catch {
      fs.rmSync(temp, { force: true });
    }
    this.removeStaleTemps();
  }

  private removeStaleTemps(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.stateFolder);
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.startsWith(`${RUNS_INDEX_FILE}.`) || !name.endsWith('.tmp')) continue;
      const temp = path.join(this.stateFolder, name);
      const stat = fs.statSync(temp, { throwIfNoEntry: false });
      if (stat && Date.now() - stat.mtimeMs > STALE_TEMP_MS) fs.rmSync(temp, { force: true });
    }
  }
}
