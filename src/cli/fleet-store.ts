/**
 * The store of a fleet run for a command line: apart from run-store.ts, and the database's door
 * loaded only when a fleet run is asked for, so that the commands that read a folder load nothing
 * of the fleet's and run without pg installed.
 */
import type { Database, PgRunStoreOptions } from '../store/pg/index.ts';
import type { DatabaseRunStore } from '../store/store.ts';
import { commandLineKeys } from './command-line-keys.ts';

/** The keys of the environment, read once by whichever store of the command needs them first: a sealed fleet run opens with them. */
const keys = commandLineKeys();

/** The store of a fleet run, in the database the command opened. */
export async function fleetStoreOf(database: Database, runId: string, options: PgRunStoreOptions = {}): Promise<DatabaseRunStore> {
  const { openDatabaseStore } = await import('../store/pg/index.ts');
  return openDatabaseStore(database, runId, { keys, ...options });
}
