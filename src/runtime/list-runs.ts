/** Every run of a folder of runs, with where each stands: what `durable-agent list` prints (listRuns, src/fleet/list-runs.ts, reads a folder with it). */
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import type { RunsFolder } from '../store/store.ts';
import { ListCursorError } from './list-errors.ts';
import { type RunSummary, summaryOfJournal, unreadableSummary, withChildren } from './run-summary.ts';

/** @deprecated A run of a folder is a RunSummary, as every run listed is. */
export type RunListing = RunSummary;

export interface ListOptions {
  /** Only the runs resting in these states. */
  states?: readonly AgentStateName[] | undefined;
  /** Archived runs too (default true). */
  archived?: boolean | undefined;
  /** At most this many runs: a page. */
  limit?: number | undefined;
  /** The runs after this one in the list's order (the id of the last run of the page before): the next page. */
  after?: string | undefined;
}

/** Newest first; a journal that cannot be read is listed with its problem, never skipped. */
export async function listFolderRuns(runs: RunsFolder, options: ListOptions = {}): Promise<RunSummary[]> {
  const listings: RunSummary[] = [];
  for (const entry of runs.entries()) {
    if (entry.archived && options.archived === false) continue;
    let listing: RunSummary;
    try {
      const loaded = await entry.read();
      const pause = (await entry.controls()).find((request) => request.kind === 'pause');
      listing = summaryOfJournal(loaded, { location: entry.location, archived: entry.archived, pausedBy: pause?.by ?? null });
    } catch (error) {
      listing = unreadableSummary(entry.folderId ?? '?', entry, (error as Error).message);
    }
    listings.push(listing);
  }
  // Children are counted over every run, whichever states are asked for.
  const states = options.states;
  const listed = withChildren(listings)
    .filter((listing) => !states || (listing.state !== null && states.includes(listing.state)))
    .sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0) || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
  const from = options.after === undefined ? 0 : listed.findIndex((listing) => listing.runId === options.after && !listing.archived) + 1;
  if (from === 0 && options.after !== undefined) throw new ListCursorError(options.after);
  return listed.slice(from, options.limit === undefined ? undefined : from + options.limit);
}
