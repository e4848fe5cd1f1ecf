/** Every run of a folder of runs, with where each stands: what `durable-agent list` prints (listRuns, src/fleet/list-runs.ts, reads a folder with it). */
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import path from 'node:path';
import { RUNS_DIR } from '../store/open-store.ts';
import type { KeysGiven } from '../seal/keys.ts';
import type { RunsFolder, StoredRunEntry } from '../store/store.ts';
import { ListCursorError } from './list-errors.ts';
import { type IndexedRun, RunsIndex, runFolderSignature } from './runs-index.ts';
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
 * its summaries come from the index; the others are read, and the index written again.
 */
export async function listFolderRuns(runs: RunsFolder, options: ListOptions = {}): Promise<RunSummary[]> {
  const listings: RunSummary[] = [];
  const index = RunsIndex.load(runs.root);
  const byFolder = new Map<string, StoredRunEntry[]>();
  for (const entry of runs.entries()) {
    const id = entry.folderId ?? '';
    byFolder.set(id, [...(byFolder.get(id) ?? []), entry]);
  }
  for (const [id, entries] of byFolder) {
    const signature = runFolderSignature(id === '' ? runs.root : path.join(runs.root, RUNS_DIR, id));
    const indexed = index.get(id, signature);
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
    index.set(id, signature, read);
  }
  index.keepOnly(new Set(byFolder.keys()));
  index.save();
  // Children are counted over every run, whichever states are asked for.
  const states = options.states;
  const listed = withChildren(listings)
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
