/**
 * One row of the console's list of runs, the states it filters by, and the key a row's run is
 * found by: the key names a folder by its place in the list given, never by its path, so an
 * address cannot reach a folder the console was not given.
 */
import path from 'node:path';
import type { RunSummary } from '../runtime/run-summary.ts';

export { categoryOf, RUN_CATEGORIES, type RunCategory } from '../runtime/run-summary.ts';

/** A run's summary (what every list of runs shows), with the key the console finds it by and its fleet lease. */
export interface ConsoleRow extends RunSummary {
  key: string;
  /** Fleet runs: the worker that holds its lease (while it is held) and the lease's epoch. */
  worker: string | null;
  leaseEpoch: number | null;
}

export const KEY_SEPARATOR = '~';
export const FLEET_KEY = 'fleet';

export function keyOf(index: number, folderId: string | null, archivedJournal: string | null): string {
  return [String(index), folderId ?? '', archivedJournal ? path.basename(archivedJournal, '.jsonl') : ''].join(KEY_SEPARATOR);
}

/** Newest save first; rows saved at the same moment in the order of their keys. */
export function newestFirst(a: ConsoleRow, b: ConsoleRow): number {
  return (b.updatedAt ?? 0) - (a.updatedAt ?? 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}
