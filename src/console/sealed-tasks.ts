/**
 * The tasks of the console's list rows of sealed fleet runs (a task submitted sealed, a sealed
 * fork's): opened when the console holds the master key, else named, with the key they need
 * (fleet/sealed-tasks.ts, the words every view of the fleet uses). A sealed string is never
 * shown as if it were the task.
 */
import { environmentKeys } from '../seal/environment-keys.ts';
import type { KeysGiven } from '../seal/keys.ts';
import { isSealedValue } from '../seal/value-codec.ts';
import type { Database } from '../store/pg/pool.ts';
import type { ConsoleRow } from './console-row.ts';

/** The keys of the console's environment, read when a sealed task is first shown. */
export const consoleKeys = environmentKeys();

export async function withSealedTasksShown(pool: Database, rows: ConsoleRow[], keys: KeysGiven = consoleKeys): Promise<ConsoleRow[]> {
  if (!rows.some((row) => isSealedValue(row.task))) return rows;
  const { keysReader, shownFleetTasks } = await import('../fleet/sealed-tasks.ts');
  const shown = await shownFleetTasks(pool, rows, keysReader(keys));
  return rows.map((row) => (shown.has(row.runId) ? { ...row, task: shown.get(row.runId)! } : row));
}
