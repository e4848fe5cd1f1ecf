/**
 * A state folder's part of the console's first page from its index's head alone (runs-index.ts),
 * before the console has looked at every run folder: the rows of the runs that have not ended
 * (each folder's taken from the head while its signature is the one the head holds, read again
 * otherwise), the newest rows of the ended runs, and every run counted. It is believed under the
 * same rule as `list --state`: only while ROOT/runs keeps the time the head saw, old enough to
 * trust; writers move that time when a run is added or one that had ended is written to again.
 * The ended rows it shows are each looked at too (three stats), so one whose journal was changed
 * by hand is not shown as the head has it; what the counts hold of the others is believed.
 */
import path from 'node:path';
import { RUNS_DIR } from '../store/open-store.ts';
import { type TenantCounts, trustedPage } from '../runtime/runs-index.ts';
import type { ConsoleRow } from './console-row.ts';
import { folderSignature, indexedRows, readFolderRows, type RunFolder } from './folder-rows.ts';

export interface HeadRows {
  /** The rows of the folders whose runs have not all ended (and the state folder's own run's): not in order. */
  live: ConsoleRow[];
  /** The newest rows of the runs that ended (HEAD_ENDED_RUNS of them at most): not in order. */
  ended: ConsoleRow[];
  /** Every run that ended, counted: those not among `ended` too. */
  endedCounts: TenantCounts;
}

/** The folder's rows from its head; null when there is no head to believe (then every run folder is looked at). */
export async function headRows(index: number, root: string): Promise<HeadRows | null> {
  const front = trustedPage(root);
  if (!front) return null;
  const { head, page } = front;
  const folderOf = (id: string): RunFolder => ({ index, root, folderId: id === '' ? null : id, dir: id === '' ? root : path.join(root, RUNS_DIR, id) });
  const live: ConsoleRow[] = [];
  for (const [id, indexed] of Object.entries(head.live)) {
    const folder = folderOf(id);
    live.push(...(folderSignature(folder.dir) === indexed.signature ? indexedRows(folder, indexed.runs) : await readFolderRows(folder, new Map())));
  }
  const ended: ConsoleRow[] = [];
  for (const run of page.newestEnded) {
    const folder = folderOf(run.folderId);
    // No writer touched them, or ROOT/runs would have moved; a journal deleted or edited by hand did.
    if (folderSignature(folder.dir) !== run.signature) return null;
    ended.push(...indexedRows(folder, [run]));
  }
  return { live, ended, endedCounts: page.endedCounts };
}
