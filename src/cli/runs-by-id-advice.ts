/**
 * What to say when a command found no run of a folder's own: the runs by id the folder holds, if
 * any, and how to name one. Loaded only when a command fails.
 */
import path from 'node:path';
import { StoreMissingError } from '../store/errors.ts';
import { JOURNAL_FILE, openRunsFolder } from '../store/open-store.ts';

const IDS_SHOWN = 5;

export function runsByIdAdvice(error: unknown): string | null {
  if (!(error instanceof StoreMissingError) || path.basename(error.location) !== JOURNAL_FILE) return null;
  let ids: string[];
  try {
    const entries = openRunsFolder(path.dirname(error.location)).entries();
    ids = [...new Set(entries.flatMap((entry) => (entry.archived || entry.folderId === null ? [] : [entry.folderId])))].sort();
  } catch {
    return null;
  }
  if (ids.length === 0) return null;
  const shown = ids.length > IDS_SHOWN ? `${ids.slice(0, IDS_SHOWN).join(', ')} and ${ids.length - IDS_SHOWN} more` : ids.join(', ');
  return `the folder holds runs by id (${shown}): name one with --run ID, e.g. --run ${ids[0]} (list shows them all).`;
}
