/**
 * listRuns over any store: a folder of runs (read from its journals, runtime/list-runs.ts) or a
 * fleet's database (da_runs, fleet-summary.ts), each run as its RunSummary. The fleet's side is
 * loaded only when a database is given, so that the main entry never loads pg.
 */
import type { RunsFolder } from '../store/store.ts';
import type { Database } from '../store/pg/pool.ts';
import { type ListOptions, listFolderRuns } from '../runtime/list-runs.ts';
import { ListCursorError } from '../runtime/list-errors.ts';
import type { RunSummary } from '../runtime/run-summary.ts';
import type { FleetRunSummary } from './fleet-summary.ts';

/** A folder's runs, newest first; a journal that cannot be read is listed with its problem, never skipped. ListCursorError for an `after` not in the list. */
export function listRuns(where: RunsFolder, options?: ListOptions): Promise<RunSummary[]>;
/** A fleet's runs in the queue's order, each with its row of the queue (`fleet`). */
export function listRuns(where: Database, options?: ListOptions): Promise<FleetRunSummary[]>;
export async function listRuns(where: RunsFolder | Database, options: ListOptions = {}): Promise<RunSummary[]> {
  if (isRunsFolder(where)) return listFolderRuns(where, options);
  const { listFleetRuns } = await import('./fleet-summary.ts');
  // A fleet keeps no archived runs in its list: archived: false leaves it as it is. Its pages
  // come in the queue's order, each from where the last ended (a cursor, never an offset).
  if (options.after !== undefined) {
    const { runExists } = await import('../store/pg/queue.ts');
    if (!(await runExists(where, options.after))) throw new ListCursorError(options.after);
  }
  return listFleetRuns(where, { states: options.states, after: options.after, limit: options.limit, tenant: options.tenant }, options.keys);
}

/** A folder of runs opens runs by id from a root; a database pool has neither. */
function isRunsFolder(where: RunsFolder | Database): where is RunsFolder {
  return typeof (where as Partial<RunsFolder>).root === 'string' && typeof (where as Partial<RunsFolder>).entries === 'function';
}
