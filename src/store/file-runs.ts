/**
 * A folder of runs, each by its id: in a state folder ROOT, ROOT/runs/<id>/ is one run's folder,
 * laid out as a run folder has always been (its journal, lock, inboxes and archive). A folder
 * written before run ids (its one run at ROOT itself) still opens, resumes and lists: it is one
 * more entry. Opening a run by id reads nothing but that run's own folder, however many runs
 * there are. FileRuns is the one a program names by its folder DIR (ROOT = DIR/.durable-agent,
 * where every command looks: state-folder-of.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { type FileStore, type FileStoreOptions, JOURNAL_FILE, RunFolderStore } from './file-store.ts';
import { readJournal } from './journal/journal-reader.ts';
import { checkRunId } from './run-id.ts';
import { RUNS_DIR } from './runs-changed.ts';
import { stateFolderOf } from './state-folder-of.ts';
import type { LoadedRun, RunsFolder, StoredRunEntry } from './store.ts';

export type { StoredRunEntry } from './store.ts';

export { RUNS_DIR } from './runs-changed.ts';
const ARCHIVED_JOURNAL = /^journal-.*\.jsonl$/;

/**
 * The runs of the folder `dir`, kept in its state folder dir/.durable-agent (its own run there,
 * its runs by id in dir/.durable-agent/runs/<id>/): what `--dir dir` lists and opens.
 */
export class FileRuns implements RunsFolder {
  /** The state folder: of the folder given (StateFolderRuns: the folder given). */
  readonly root: string;
  readonly location: string;

  constructor(
    given: string,
    private readonly options: FileStoreOptions = {},
  ) {
    this.root = this.rootOf(given);
    this.location = this.root;
  }

  /** Where the runs of the folder given are kept. Called by the constructor, before any field of a subclass is set. */
  protected rootOf(given: string): string {
    return stateFolderOf(given);
  }

  /** The store of the run with this id (RunIdError for an id that is not a safe name); nothing is read or made. */
  store(runId: string): FileStore {
    return new RunFolderStore(path.join(this.root, RUNS_DIR, checkRunId(runId)), { ...this.options, runId });
  }

  /** Every run of the folder, current and archived, in no particular order. */
  entries(only?: { idPrefix: string }): StoredRunEntry[] {
    // Named by a prefix, the runs are found among the names: a folder of ten thousand runs is not looked into for a run's few children.
    const entries = only ? [] : runFolderEntries(this.root, null);
    const byId = path.join(this.root, RUNS_DIR);
    for (const name of listDir(byId)) {
      if (only && !name.startsWith(only.idPrefix)) continue;
      if (fs.statSync(path.join(byId, name), { throwIfNoEntry: false })?.isDirectory()) entries.push(...runFolderEntries(path.join(byId, name), name));
    }
    return entries;
  }

  folderEntries(folderId: string | null): StoredRunEntry[] {
    return runFolderEntries(folderId === null ? this.root : path.join(this.root, RUNS_DIR, checkRunId(folderId)), folderId);
  }
}

/** The runs of exactly the state folder given. */
export class StateFolderRuns extends FileRuns {
  protected override rootOf(given: string): string {
    return given;
  }
}

/** The current run of one run folder (if its journal is there) and its archived runs. */
function runFolderEntries(dir: string, folderId: string | null): StoredRunEntry[] {
  const entries: StoredRunEntry[] = [];
  const journal = path.join(dir, JOURNAL_FILE);
  if (fs.existsSync(journal)) {
    // Made when the entry is read: a listing that takes the run from the folder's index makes none.
    let store: RunFolderStore | null = null;
    const storeOf = () => (store ??= new RunFolderStore(dir, folderId === null ? {} : { runId: folderId }));
    entries.push({ folderId, location: journal, archived: false, read: () => storeOf().load({ fromLastSnapshot: true }), controls: () => storeOf().control.read() });
  }
  const archive = path.join(dir, 'archive');
  for (const name of listDir(archive).filter((file) => ARCHIVED_JOURNAL.test(file))) {
    const file = path.join(archive, name);
    entries.push({ folderId, location: file, archived: true, read: async () => readArchived(file), controls: async () => [] });
  }
  return entries;
}

function readArchived(file: string): LoadedRun {
  const journal = readJournal(file, fs.readFileSync(file), { fromLastSnapshot: true });
  return { header: journal.header, records: journal.records, tornTail: null, totalBytes: journal.goodLength };
}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
}
