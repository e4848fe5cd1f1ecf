/** Every run of a folder of runs, with where each stands: what `durable-agent list` prints. */
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import type { RunsFolder } from '../store/store.ts';

export interface RunListing {
  runId: string;
  /** The state the run rests in ('awaitingDecision': it waits for a person); null when its journal cannot be read. */
  state: AgentStateName | null;
  /** Why the journal cannot be read, when it cannot. */
  problem: string | null;
  task: string;
  turn: number;
  /** Epoch milliseconds of its last record. */
  updatedAt: number | null;
  /** The run it was forked from, if it was. */
  parent: string | null;
  /** For a sub-agent's child run: the run and call that started it. */
  calledBy: { runId: string; toolUseId: string } | null;
  /** Moved aside (archive/) when a new run started in its folder, or by --fresh. */
  archived: boolean;
  /** Its journal. */
  location: string;
}

export interface ListOptions {
  /** Only the runs resting in these states. */
  states?: readonly AgentStateName[] | undefined;
  /** Archived runs too (default true). */
  archived?: boolean | undefined;
}

/** Newest first; a journal that cannot be read is listed with its problem, never skipped. */
export async function listRuns(runs: RunsFolder, options: ListOptions = {}): Promise<RunListing[]> {
  const listings: RunListing[] = [];
  for (const entry of runs.entries()) {
    if (entry.archived && options.archived === false) continue;
    let listing: RunListing;
    try {
      const loaded = await entry.read();
      const view = foldJournal(entry.location, loaded);
      const last = loaded.records[loaded.records.length - 1]!.record;
      listing = {
        runId: loaded.header.runId,
        state: view.state,
        problem: null,
        task: view.context.task,
        turn: view.context.turn,
        updatedAt: last.at,
        parent: loaded.header.forkedFrom?.runId ?? null,
        calledBy: loaded.header.calledBy ?? null,
        archived: entry.archived,
        location: entry.location,
      };
    } catch (error) {
      listing = { runId: entry.folderId ?? '?', state: null, problem: (error as Error).message, task: '', turn: 0, updatedAt: null, parent: null, calledBy: null, archived: entry.archived, location: entry.location };
    }
    if (options.states && (listing.state === null || !options.states.includes(listing.state))) continue;
    listings.push(listing);
  }
  return listings.sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0));
}
