/** The store of a fleet run, by its id: the database's side of the store's door (open-store.ts has the folders'). */
import type { DatabaseRunStore } from '../store.ts';
import { PgRunStore, type PgRunStoreOptions } from './pg-store.ts';
import type { Database } from './pool.ts';

/** A run of a fleet's database (a worker passes the lease it holds in `options`); nothing is read until it is used. */
export function openDatabaseStore(database: Database, runId: string, options?: PgRunStoreOptions): DatabaseRunStore {
  return new PgRunStore(database, runId, options);
}
