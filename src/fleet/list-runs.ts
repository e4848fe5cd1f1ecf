/**
 * listRuns over any store: a folder of runs (read from its journals, runtime/list-runs.ts) or a
 * fleet's database (da_runs, fleet-summary.ts), each run as its RunSummary. The fleet's side is
 * loaded only when a database is given, so that the main entry never loads pg.
 */
import { FileRuns } from '../store/file-runs.ts';
import type { Database } from '../store/pg/pool.ts';
import { type ListOptions, listFolderRuns } from '../runtime/list-runs.ts';
import type { RunSummary } from '../runtime/run-summary.ts';
import type { FleetRunSummary } from './fleet-summary.ts';

/** A folder's runs, newest first; a journal that cannot be read is listed with its problem, never skipped. */
export function listRuns(where: FileRuns, options?: ListOptions): Promise<RunSummary[]>;
/** A fleet's runs in the queue's order, each with its row of the queue (`fleet`). */
export function listRuns(where: Database, options?: ListOptions): Promise<FleetRunSummary[]>;
export async function listRuns(where: FileRuns | Database, options: ListOptions = {}): Promise<RunSummary[]> {
  if (where instanceof FileRuns) return listFolderRuns(where, options);
  const { listFleetRuns } = await import('./fleet-summary.ts');
  const states = options.states;
  // A fleet keeps no archived runs in its list: archived: false leaves it as it is.
  return (await listFleetRuns(where)).filter((run) => !states || (run.state !== null && states.includes(run.state)));
}
