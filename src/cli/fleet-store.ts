/** The store of a fleet run for a command line: apart from run-store.ts, so that the commands that read a folder load nothing of the database's. */
import { type Database, openDatabaseStore, type PgRunStoreOptions } from '../store/pg/index.ts';
import type { DatabaseRunStore } from '../store/store.ts';

/** The store of a fleet run, in the database the command opened. */
export function fleetStoreOf(database: Database, runId: string, options: PgRunStoreOptions = {}): DatabaseRunStore {
  return openDatabaseStore(database, runId, options);
}
