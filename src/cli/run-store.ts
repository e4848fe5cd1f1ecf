/**
 * Where every command gets its store: the one place the command line opens a run's store, each
 * through the store's door (openStore), never naming a store's class. A run in a directory is
 * kept in DIR/.durable-agent (its own run, or a run by id in its folder of runs), where a program
 * that names DIR keeps it too (stateFolderOf); a fleet run is a row of the fleet's database.
 */
import path from 'node:path';
import { type FolderStoreOptions, openRunsFolder, openStore, stateFolderOf as stateFolderIn } from '../store/open-store.ts';
import type { FolderRunStore, RunsFolder } from '../store/store.ts';
import { commandLineKeys } from './command-line-keys.ts';

/** The keys of the environment, read once by whichever store of the command needs them first. */
const keys = commandLineKeys();

/** DIR/.durable-agent (or DIR, when it is a state folder itself): the state folder of the runs a command line reads and starts in DIR. */
export function stateFolderOf(dir: string): string {
  return stateFolderIn(path.resolve(dir));
}

/** The store of a run the command line names: DIR's own run, or the run of that id in DIR's folder of runs. */
export function fileStoreOf(dir: string, runId: string | null, options: FolderStoreOptions = {}): FolderRunStore {
  return openStore({ dir: stateFolderOf(dir), runId, options: { keys, ...options } });
}

/** The store of a state folder given as it is (a fork's scratch folder, a store's own folder again). */
export function folderStoreAt(stateFolder: string, options: FolderStoreOptions = {}, runId?: string): FolderRunStore {
  return openStore({ dir: stateFolder, options: runId === undefined ? { keys, ...options } : { keys, ...options, runId } });
}

/** DIR's folder of runs: its own run and its runs by id. */
export function runsFolderOfDir(dir: string): RunsFolder {
  return openRunsFolder(stateFolderOf(dir), { keys });
}
