/**
 * The rows of one run folder (DIR/.durable-agent itself, or one run by id under its runs/): its
 * current run, if its journal is there, and each archived run. What a row shows is read from the
 * journal from its last snapshot on, and from the control inbox (a pause).
 */
import fs from 'node:fs';
import path from 'node:path';
import { folderOfState, JOURNAL_FILE, openRunsFolder, openStore } from '../store/open-store.ts';
import { readJournal } from '../store/journal/journal-reader.ts';
import type { FolderRunStore, LoadedRun } from '../store/store.ts';
import { type RunSummary, summaryOfJournal, unreadableSummary } from '../runtime/run-summary.ts';
import { type ConsoleRow, keyOf } from './console-row.ts';
import { ARCHIVE_DIR, type IndexedRun, runFolderSignature } from '../runtime/runs-index.ts';

export interface RunFolder {
  /** The place of its state folder in the list the console was given. */
  index: number;
  /** The state folder (DIR/.durable-agent). */
  root: string;
  /** Its id under runs/; null for the state folder's own run. */
  folderId: string | null;
  /** The folder itself. */
  dir: string;
}

export { ARCHIVE_DIR } from '../runtime/runs-index.ts';
const ARCHIVED_JOURNAL = /^journal-.*\.jsonl$/;

/** An archived journal's row, kept while the file stays as it was (an archived run is not written again). */
export type ArchivedRows = Map<string, { signature: string; row: ConsoleRow }>;

/** What changes when one of the folder's rows may: three stats (runs-index.ts). */
export const folderSignature = runFolderSignature;

/** A folder's rows from the folder's index, each with its key and where it lives, as readFolderRows makes them. */
export function indexedRows(folder: RunFolder, indexed: readonly IndexedRun[]): ConsoleRow[] {
  const location = folder.folderId === null ? folderOfState(folder.root) : folder.dir;
  return indexed.map(({ archivedJournal, summary }) => ({
    ...summary,
    location,
    children: null,
    key: keyOf(folder.index, folder.folderId, archivedJournal === null ? null : path.join(folder.dir, ARCHIVE_DIR, archivedJournal)),
    worker: null,
    leaseEpoch: null,
  }));
}

/** The folder's rows: its current run first, then its archived runs (read again only when their file changed). */
export async function readFolderRows(folder: RunFolder, archived: ArchivedRows): Promise<ConsoleRow[]> {
  const rows: ConsoleRow[] = [];
  const location = folder.folderId === null ? folderOfState(folder.root) : folder.dir;
  if (fs.existsSync(path.join(folder.dir, JOURNAL_FILE))) {
    rows.push(
      await rowOf(folder, keyOf(folder.index, folder.folderId, null), location, false, async () => {
        const store = storeOf(folder);
        const loaded = await store.load({ fromLastSnapshot: true });
        const pause = (await store.control.read()).find((request) => request.kind === 'pause');
        return { loaded, pausedBy: pause?.by ?? null };
      }),
    );
  }
  const seen = new Set<string>();
  for (const name of readDir(path.join(folder.dir, ARCHIVE_DIR))) {
    if (!ARCHIVED_JOURNAL.test(name)) continue;
    const file = path.join(folder.dir, ARCHIVE_DIR, name);
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat?.isFile()) continue;
    seen.add(file);
    const signature = `${stat.size}:${stat.mtimeMs}`;
    const kept = archived.get(file);
    if (kept?.signature === signature) {
      rows.push(kept.row);
      continue;
    }
    const row = await rowOf(folder, keyOf(folder.index, folder.folderId, file), location, true, async () => ({ loaded: readArchived(file), pausedBy: null }));
    archived.set(file, { signature, row });
    rows.push(row);
  }
  for (const file of archived.keys()) if (!seen.has(file)) archived.delete(file);
  return rows;
}

/** The folder's store: the state folder's own run, or a run by id (RunIdError for a name that is not a run id). */
export function storeOf(folder: RunFolder): FolderRunStore {
  return folder.folderId === null ? openStore({ dir: folder.root }) : openRunsFolder(folder.root).store(folder.folderId);
}

async function rowOf(folder: RunFolder, key: string, location: string, archived: boolean, read: () => Promise<{ loaded: LoadedRun; pausedBy: string | null }>): Promise<ConsoleRow> {
  let summary: RunSummary;
  try {
    const { loaded, pausedBy } = await read();
    summary = summaryOfJournal(loaded, { location, archived, pausedBy });
  } catch (error) {
    summary = unreadableSummary(folder.folderId ?? path.basename(folderOfState(folder.root)), { location, archived }, (error as Error).message);
  }
  return { ...summary, key, worker: null, leaseEpoch: null };
}

function readArchived(file: string): LoadedRun {
  const journal = readJournal(file, fs.readFileSync(file), { fromLastSnapshot: true });
  return { header: journal.header, records: journal.records, tornTail: null, totalBytes: journal.goodLength };
}

export function readDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}
