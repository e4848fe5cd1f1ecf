/**
 * A sealed run's wrapped data key, kept beside its journal in RUN_FOLDER/run-key.json rather than
 * in it: a rotation rewrites this one small file per run, and deleting it leaves the run's content
 * unreadable for good (crypto-shredding) while its journal stays whole.
 *
 * It is written whole or not at all (temp file, fsync, rename, the folder fsynced), before the
 * journal it serves exists, so a crash never leaves a sealed journal without its key file. A new
 * run's is written while the journal's temp file is being fsynced (file-store.ts): the two waits
 * overlap, and the journal's name is linked only once both are over.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type WrappedRunKey, masterKeyIdOf, rewrapRunKey } from '../seal/envelope.ts';
import type { MasterKeys } from '../seal/keys.ts';
import { SealedValueError } from '../seal/seal-errors.ts';
import { fsyncDir, writeFileDurably } from '../util/durable-file.ts';
import { RunKeyMissingError, RunNotSealedError } from './errors.ts';
import type { JournalHeader } from './journal/journal-record.ts';
import type { RunKeyPlace } from './run-sealing.ts';
import { PRIVATE_FILE } from './state-folder.ts';

export const RUN_KEY_FILE = 'run-key.json';

/** A run folder's run-key.json, as the place RunSealing keeps the run key of the folder's run. */
export function runKeyFilePlace(runFolder: string): RunKeyPlace {
  return {
    read: async (runId) => readRunKeyFile(runFolder, runId),
    write: async (_runId, wrapped) => writeRunKeyFile(runFolder, wrapped),
    missing: (runId, keyId) => new RunKeyMissingError(runId, keyId, runKeyPathOf(runFolder)),
    keptBeforeCreate: false,
  };
}

/**
 * Gives a journal about to be archived its run key there first: a hard link, durable before the
 * journal moves, so that whenever a kill comes, each journal has a key file beside it (a rename
 * after the journal's move, killed between the two, left the archived journal keyless, and the
 * next run's key then replaced the only copy). Returns whether the run had a key file.
 */
export function linkRunKeyFileTo(runFolder: string, target: string): boolean {
  const from = runKeyPathOf(runFolder);
  if (!fs.existsSync(from)) return false;
  fs.linkSync(from, target);
  fsyncDir(path.dirname(target));
  return true;
}

/** Once the journal has moved to the archive: the run folder's own name for its key goes (the next run gets its own). */
export function dropArchivedRunKeyFile(runFolder: string): void {
  fs.rmSync(runKeyPathOf(runFolder), { force: true });
  fsyncDir(runFolder);
}

export function runKeyPathOf(runFolder: string): string {
  return path.join(runFolder, RUN_KEY_FILE);
}

/** Writes the wrap in place of the one there, atomically (a kill leaves the old wrap or the new). */
export function writeRunKeyFile(runFolder: string, wrapped: WrappedRunKey): void {
  writeWrap(runKeyPathOf(runFolder), wrapped);
}

function writeWrap(file: string, wrapped: WrappedRunKey): void {
  writeFileDurably(file, `${JSON.stringify(wrapped)}\n`, PRIVATE_FILE);
}

/** The wrap kept for the run, or null when there is none (a plain run, or a shredded one). */
export function readRunKeyFile(runFolder: string, runId: string | null): WrappedRunKey | null {
  return readWrap(runKeyPathOf(runFolder), runId);
}

function readWrap(file: string, runId: string | null): WrappedRunKey | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let wrapped: unknown;
  try {
    wrapped = JSON.parse(text);
  } catch (error) {
    throw new SealedValueError('run key', runId, null, `${file} is not JSON`, null, { cause: error });
  }
  if (masterKeyIdOf(wrapped) === null) throw new SealedValueError('run key', runId, null, `${file} is not a wrapped run key this release reads`);
  return wrapped as WrappedRunKey;
}

/**
 * Crypto-shreds a sealed run: deletes its wrapped run key, durably, so its content can never be
 * opened again by anyone, with any key; the journal stays (what finds and operates the run still
 * reads, and a copy of the journal in a backup is as unreadable). Refused for a plain run (there
 * is no key to delete: remove the run instead), and for a run already shredded.
 */
export async function shredRun(store: { dir: string; load(): Promise<{ header: JournalHeader }> }): Promise<{ runId: string; keyId: string }> {
  const { header } = await store.load();
  if (header.sealed === undefined) throw new RunNotSealedError(header.runId, store.dir);
  if (!deleteRunKeyFile(store.dir)) throw new RunKeyMissingError(header.runId, header.sealed, runKeyPathOf(store.dir));
  return { runId: header.runId, keyId: header.sealed };
}

/** Deletes the wrap, durably: the run's content can never be opened again. Whether there was one. */
export function deleteRunKeyFile(runFolder: string): boolean {
  const file = runKeyPathOf(runFolder);
  try {
    fs.unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  fsyncDir(runFolder);
  return true;
}

/** What a rotation did: the run keys wrapped again, those already under the sealing key, those it could not open. */
export interface RotationReport {
  rewrapped: string[];
  unchanged: string[];
  failed: Array<{ file: string; error: Error }>;
}

/**
 * Wraps every run key of a state folder again under the sealing master key (the first of the
 * keys given), opened with any of them: its own run's, its runs' by id, and those kept with
 * archived journals. Each file is replaced whole (temp file, fsync, rename), so a kill at any
 * instant leaves each key under its old master key or its new one, both given: run again, a
 * rotation redoes nothing it finished. The run keys themselves do not change, so a run in flight,
 * holding its run key opened, goes on writing as before.
 */
export async function rotateRunKeys(stateFolder: string, keys: MasterKeys, onKey?: (file: string, changed: boolean) => void): Promise<RotationReport> {
  const report: RotationReport = { rewrapped: [], unchanged: [], failed: [] };
  for (const file of runKeyFilesIn(stateFolder)) {
    try {
      const wrapped = readWrap(file, null);
      if (wrapped === null) continue; // shredded meanwhile
      const next = await rewrapRunKey(wrapped, keys);
      if (next.changed) {
        writeWrap(file, next.wrapped);
        report.rewrapped.push(file);
      } else report.unchanged.push(file);
      onKey?.(file, next.changed);
    } catch (error) {
      report.failed.push({ file, error: error as Error });
    }
  }
  return report;
}

/** Every run key file of a state folder: its own run's, each run's by id, and those of archived journals. */
function runKeyFilesIn(stateFolder: string): string[] {
  const files: string[] = [];
  for (const folder of runFoldersOf(stateFolder)) {
    const own = runKeyPathOf(folder);
    if (fs.existsSync(own)) files.push(own);
    const archive = path.join(folder, 'archive');
    for (const name of namesIn(archive).sort()) if (name.endsWith(`.${RUN_KEY_FILE}`)) files.push(path.join(archive, name));
  }
  return files;
}

/** A state folder's run folders: itself (its own run) and each of its runs by id, in name order. */
export function runFoldersOf(stateFolder: string): string[] {
  return [stateFolder, ...subfolders(path.join(stateFolder, RUNS_DIR_NAME))];
}

/** Where a state folder keeps its runs by id (file-runs.ts: RUNS_DIR), named here so that file-runs need not be loaded. */
const RUNS_DIR_NAME = 'runs';

function subfolders(dir: string): string[] {
  return namesIn(dir)
    .sort()
    .map((name) => path.join(dir, name))
    .filter((folder) => fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory() === true);
}

function namesIn(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
