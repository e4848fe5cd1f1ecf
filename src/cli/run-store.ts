/** The file store of a run the command line names: DIR's own run, or the run of that id in DIR's folder of runs. */
import path from 'node:path';
import { FileRuns } from '../store/file-runs.ts';
import { FileStore, type FileStoreOptions } from '../store/file-store.ts';
import { STATE_DIR } from './state-dir.ts';

export function fileStoreOf(dir: string, runId: string | null, options: FileStoreOptions = {}): FileStore {
  const root = path.join(path.resolve(dir), STATE_DIR);
  return runId === null ? new FileStore(root, options) : new FileRuns(root, options).store(runId);
}
