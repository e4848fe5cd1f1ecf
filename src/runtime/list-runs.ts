/** Every run of a folder of runs, with where each stands: what `durable-agent list` prints (listRuns, src/fleet/list-runs.ts, reads a folder with it). */
import { type AgentStateName, FINAL_STATES } from '../../machines/agent-loop.types.ts';
import path from 'node:path';
import { JOURNAL_FILE, RUNS_DIR } from '../store/open-store.ts';
import type { KeysGiven } from '../seal/keys.ts';
import type { RunsFolder, StoredRunEntry } from '../store/store.ts';
import { ListCursorError } from './list-errors.ts';
import { ARCHIVE_DIR, type IndexedRun, keptSignature, RunsIndex, runFolderLook, runFolderSignature, runsFolderStamp, trustedHead } from './runs-index.ts';
import { type RunSummary, summaryOfJournal, unreadableSummary, withChildren } from './run-summary.ts';

/** @deprecated A run of a folder is a RunSummary, as every run listed is. */
export type RunListing = RunSummary;

export interface ListOptions {
  /** Only the runs resting in these states. */
  states?: readonly AgentStateName[] | undefined;
  /** Archived runs too (default true). */
  archived?: boolean | undefined;
  /** Only the runs of this tenant ('default': those started without one). */
  tenant?: string | undefined;
  /** At most this many runs: a page. */
  limit?: number | undefined;
  /** The runs after this one in the list's order (the id of the last run of the page before): the next page. */
  after?: string | undefined;
  /**
   * A fleet's: the master keys a task submitted sealed is opened with; without them (or without
   * its key) the task says which master key it needs, never the sealed string.
   */
  keys?: KeysGiven | undefined;
}

/**
 * Newest first; a journal that cannot be read is listed with its problem, never skipped. A run
 * folder whose signature is the one the folder's index has (runs-index.ts) is not read again:
 * its summaries come from the index; the others are read, and the index written again. Asked
 * only for states a run has not ended in, while the index's head says the ended runs are as it
 * saw them, only the folders of the runs that have not ended are looked at.
 */
export async function listFolderRuns(runs: RunsFolder, options: ListOptions = {}): Promise<RunSummary[]> {
  const states = options.states;
  const unended = states !== undefined && states.length > 0 && states.every((state) => !FINAL_STATES.includes(state));
  const fromHead = unended ? await unendedRuns(runs, options) : null;
  if (fromHead) return listed(fromHead.listings, options, fromHead.endedChildren);
  const listings: RunSummary[] = [];
  const index = RunsIndex.load(runs.root);
  // Seen before the folders are: a run added or marked after this look moves the time the index keeps.
  const runsDir = runsFolderStamp(runs.root);
  const rootSignature = keptSignature(runFolderLook(runs.root));
  const byFolder = new Map<string, StoredRunEntry[]>();
  for (const entry of runs.entries()) {
    const id = entry.folderId ?? '';
    byFolder.set(id, [...(byFolder.get(id) ?? []), entry]);
  }
  for (const [id, entries] of byFolder) {
    const look = runFolderLook(id === '' ? runs.root : path.join(runs.root, RUNS_DIR, id));
    const indexed = index.get(id, look.signature);
    const summaries = indexed && indexed.length === entries.length ? fromIndex(entries, indexed) : null;
    if (summaries) {
      listings.push(...summaries.filter((listing) => !listing.archived || options.archived !== false));
      continue;
    }
    const read: IndexedRun[] = [];
    for (const entry of entries) {
      const listing = await summaryOf(entry);
      const { location: _location, ...summary } = listing;
      read.push({ archivedJournal: entry.archived ? path.basename(entry.location) : null, summary });
      if (!entry.archived || options.archived !== false) listings.push(listing);
    }
    index.set(id, keptSignature(look), read);
  }
  index.keepOnly(new Set(byFolder.keys()));
  index.readWhole(runsDir?.trusted ? runsDir.stamp : null, rootSignature);
  index.save();
  return listed(listings, options, {});
}

/**
 * The runs of the folders that have not ended, from the index's head, each folder's taken while
 * its signature is the one the head holds and read again otherwise (nothing written: the head
 * is written by a listing of the whole folder); null when the head cannot be trusted.
 */
async function unendedRuns(runs: RunsFolder, options: ListOptions): Promise<{ listings: RunSummary[]; endedChildren: Record<string, number> } | null> {
  if (!runs.folderEntries) return null;
  const head = trustedHead(runs.root);
  if (!head) return null;
  const listings: RunSummary[] = [];
  for (const [id, folder] of Object.entries(head.live)) {
    const dir = id === '' ? runs.root : path.join(runs.root, RUNS_DIR, id);
    if (runFolderSignature(dir) === folder.signature) {
      for (const { archivedJournal, summary } of folder.runs) {
        const location = archivedJournal === null ? path.join(dir, JOURNAL_FILE) : path.join(dir, ARCHIVE_DIR, archivedJournal);
        if (archivedJournal === null || options.archived !== false) listings.push({ ...summary, location, children: null } as RunSummary);
      }
      continue;
    }
    for (const entry of runs.folderEntries(id === '' ? null : id)) {
      if (entry.archived && options.archived === false) continue;
      listings.push(await summaryOf(entry));
    }
  }
  return { listings, endedChildren: head.endedChildren };
}

/** Children counted over every run (those of the ended folders counted already), whichever states are asked for; then the states, the tenant, the order and the page. */
function listed(listings: RunSummary[], options: ListOptions, endedChildren: Record<string, number>): RunSummary[] {
  const states = options.states;
  for (const listing of withChildren(listings)) if (!listing.archived) listing.children = (listing.children ?? 0) + (endedChildren[listing.runId] ?? 0);
  const listed = listings
    .filter((listing) => !states || (listing.state !== null && states.includes(listing.state)))
    .filter((listing) => options.tenant === undefined || listing.tenant === options.tenant)
    .sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0) || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
  const from = options.after === undefined ? 0 : listed.findIndex((listing) => listing.runId === options.after && !listing.archived) + 1;
  if (from === 0 && options.after !== undefined) throw new ListCursorError(options.after);
  return listed.slice(from, options.limit === undefined ? undefined : from + options.limit);
}

async function summaryOf(entry: StoredRunEntry): Promise<RunSummary> {
  try {
    const loaded = await entry.read();
    const pause = (await entry.controls()).find((request) => request.kind === 'pause');
    return summaryOfJournal(loaded, { location: entry.location, archived: entry.archived, pausedBy: pause?.by ?? null });
  } catch (error) {
    return unreadableSummary(entry.folderId ?? '?', entry, (error as Error).message);
  }
}

/** A folder's summaries from the index, each where its entry says it lives; null when they do not match its entries one for one. */
function fromIndex(entries: readonly StoredRunEntry[], indexed: readonly IndexedRun[]): RunSummary[] | null {
  const summaries: RunSummary[] = [];
  for (const entry of entries) {
    const name = entry.archived ? path.basename(entry.location) : null;
    const run = indexed.find((candidate) => candidate.archivedJournal === name);
    if (!run) return null;
    summaries.push({ ...run.summary, location: entry.location, children: null } as RunSummary);
  }
  return summaries;
}
