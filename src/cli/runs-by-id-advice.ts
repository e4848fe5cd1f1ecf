/**
 * What to say when a command found no run of a folder's own: the runs by id the folder holds, if
 * any, and how to name one (a failed command's advice, and viz's).
 */
import path from 'node:path';
import { StoreMissingError } from '../store/errors.ts';
import { JOURNAL_FILE, openRunsFolder } from '../store/open-store.ts';

const IDS_SHOWN = 5;

/** The ids of the runs by id a state folder holds (not archived), sorted. */
export function runIdsIn(stateFolder: string): string[] {
  const entries = openRunsFolder(stateFolder).entries();
  return [...new Set(entries.flatMap((entry) => (entry.archived || entry.folderId === null ? [] : [entry.folderId])))].sort();
}

/** The ids for a message: the first few, and how many more. */
export function shownIds(ids: readonly string[]): string {
  return ids.length > IDS_SHOWN ? `${ids.slice(0, IDS_SHOWN).join(', ')} and ${ids.length - IDS_SHOWN} more` : ids.join(', ');
}

export function runsByIdAdvice(error: unknown): string | null {
  if (!(error instanceof StoreMissingError) || path.basename(error.location) !== JOURNAL_FILE) return null;
  let ids: string[];
  try {
    ids = runIdsIn(path.dirname(error.location));
  } catch {
    return null;
  }
  if (ids.length === 0) return null;
  return `the folder holds runs by id (${shownIds(ids)}): name one with --run ID, e.g. --run ${ids[0]} (list shows them all).`;
}
