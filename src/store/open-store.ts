/**
 * The one door to the stores: what lies outside src/store/ opens a run's store from where the
 * run is (a state folder, a folder of runs, a database) and never names a store's class. What a
 * caller may ask of the store it gets is in the port (store.ts): the contract, and what a store
 * that keeps its run in a folder adds (FolderRunStore, keptInFolder).
 */
import path from 'node:path';
import { RUNS_DIR, StateFolderRuns } from './file-runs.ts';
import { type FileStoreOptions, RunFolderStore } from './file-store.ts';
import type { FolderRunStore, RunStore, RunsFolder } from './store.ts';

export type { FileStoreOptions as FolderStoreOptions } from './file-store.ts';
export type { PgRunStoreOptions as DatabaseStoreOptions } from './pg/pg-store.ts';
export type { Database } from './pg/pool.ts';
/** A state folder's layout, for readers that watch it (the console's index): the journal, the runs by id, the control inbox. */
export { JOURNAL_FILE } from './file-store.ts';
export { RUNS_DIR } from './file-runs.ts';
/** Where a folder's runs are: its state folder (DIR/.durable-agent), the same for a program and every command. */
export { folderOfState, STATE_DIR, stateFolderOf } from './state-folder-of.ts';
export { CONTROL_DIR } from './inbox/file-control-inbox.ts';
/** The points of a request's or a decision's write into a folder's inbox, for the crash drills of the commands that write them. */
export { CONTROL_POINTS, type ControlPoint } from './inbox/file-control-inbox.ts';
export type { InboxPoint } from './inbox/file-decision-inbox.ts';
/** Sealed runs: crypto-shredding one (its wrapped key deleted), and the file that key is kept in. */
export { RUN_KEY_FILE, type RotationReport, rotateRunKeys, shredRun } from './run-key-file.ts';
export { SEAL_IN_POINTS, type SealInPoint, type SealInReport, sealPlainRuns } from './seal-plain-runs.ts';
/** A sealed run read without its key: what shows its content throws the refusal its load carries. */
export { requireContent } from './store.ts';
/** Storage faults armed from the environment (DURABLE_AGENT_FAIL_WRITE), for the demo's drills. */
export { WriteFaultPlan } from './write-faults.ts';
/** How long a file store's lock from another host may go without a heartbeat (DURABLE_AGENT_LOCK_LEASE_MS). */
export { DEFAULT_LOCK_LEASE_MS, LOCK_LEASE_RANGE_MS } from './lock-lease.ts';

/**
 * A run kept in files: the run of the state folder `dir` itself (stateFolderOf gives a folder's),
 * or, with `runId`, the run of that id in `dir`'s folder of runs (dir/runs/<id>/).
 */
export interface FolderTarget {
  dir: string;
  runId?: string | null | undefined;
  options?: FileStoreOptions | undefined;
}

/** The store of the run at `target`; nothing is read or made until it is used. (A fleet run's: openDatabaseStore, from the database's door, pg/index.ts, which loads nothing of the fleet's until a command needs it.) */
export function openStore(target: FolderTarget): FolderRunStore {
  const { dir, runId, options } = target;
  return runId === null || runId === undefined ? new RunFolderStore(dir, options) : new StateFolderRuns(dir, options).store(runId);
}

/** The folder of runs at `dir` (a state folder: its own run and its runs by id). */
export function openRunsFolder(dir: string, options?: FileStoreOptions): RunsFolder {
  return new StateFolderRuns(dir, options);
}

/** The folder of runs a store's run is in (ROOT for ROOT/runs/<id>, the folder itself for its root run); null for a store not kept in a folder. */
export function runsFolderOf(store: RunStore): RunsFolder | null {
  if (store.dir === undefined) return null;
  const parent = path.dirname(store.dir);
  return path.basename(parent) === RUNS_DIR ? new StateFolderRuns(path.dirname(parent)) : new StateFolderRuns(store.dir);
}
