/**
 * The tree of runs a run's sub-agent calls started: each child run is kept in the folder of runs
 * its parent is in, under an id derived from the parent's id and the call's (childRunIdOf), with
 * the parent and the call in its header (calledBy). Found by the folder's names, confirmed by the
 * header: a stat per run of the folder and a read per child, nothing kept anywhere else. A reader
 * that holds the parent's whole journal names the children by its calls instead (every child's
 * call is in a record of the parent's before the child starts): a look at each call's child
 * folder, however many runs the folder holds.
 */
import { createHash } from 'node:crypto';
import type { AgentStateName, Budget, TokenUsage } from '../../machines/agent-loop.types.ts';
import fs from 'node:fs';
import path from 'node:path';
import { JOURNAL_FILE, RUNS_DIR, runsFolderOf } from '../store/open-store.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import type { LoadedRun, RunStore } from '../store/store.ts';

const MAX_RUN_ID = 128;
const HASH_CHARS = 16;
/** How deep a tree is followed: deeper than any real delegation, and a bound on a loop of ids. */
const MAX_DEPTH = 16;

/**
 * The id of the child a call starts: the parent's id and the call's, so that it is the same on
 * every resume of the parent. Cut with a hash of the whole where it would be too long.
 */
export function childRunIdOf(parentRunId: string, toolUseId: string): string {
  const id = `${parentRunId}.${toolUseId}`.replace(/[^A-Za-z0-9._-]/g, '_');
  if (id.length <= MAX_RUN_ID) return id;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, HASH_CHARS);
  return `${id.slice(0, MAX_RUN_ID - HASH_CHARS - 1)}.${hash}`;
}

/** What every child id of the parent begins with. */
function childPrefixOf(parentRunId: string): string {
  return `${parentRunId}.`.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, MAX_RUN_ID - HASH_CHARS - 1);
}

/** The folder of runs a file store's run is in (ROOT for ROOT/runs/<id>, the folder itself for its root run); null for any other store. */
/** Where a run's children are found beside it: the store's door answers (a folder of runs, or none). */
export { runsFolderOf };

export interface ChildRun {
  runId: string;
  /** The parent's call that started it. */
  toolUseId: string;
  state: AgentStateName;
  turn: number;
  task: string;
  usage: TokenUsage;
  budget: Budget | null;
  costUsd: number | null;
  store: RunStore;
  /** Its own children, the same way. */
  children: ChildRun[];
}

/**
 * The runs the run in `store` started by its calls (and theirs), in the order of their calls'
 * ids: found beside it in its folder of runs, or, for a store that knows the runs its run waits
 * for (a fleet's queued children), those; [] for any other store. With `calls` (the ids of every
 * call of the run's whole journal: callIdsOf), a folder's children are looked for under the names
 * those calls give them, not among all the folder's names.
 */
export async function childRunsOf(store: RunStore, runId: string, depth = 0, calls?: ReadonlySet<string>): Promise<ChildRun[]> {
  if (depth >= MAX_DEPTH) return [];
  const children: ChildRun[] = [];
  for (const candidate of await candidatesOf(store, runId, calls)) {
    let loaded;
    let grandchildCalls: ReadonlySet<string> | undefined;
    try {
      if (calls) {
        // The whole journal, for its calls: its own children are named by them in turn.
        loaded = await candidate.store.load();
        grandchildCalls = callIdsOf(loaded);
      } else loaded = await candidate.read();
    } catch {
      // A child whose journal cannot be read (or is not made yet) is its own run's problem: status of that run says so.
      continue;
    }
    const calledBy = loaded.header.calledBy;
    if (calledBy?.runId !== runId) continue;
    const view = foldJournal(candidate.store.location, loaded);
    children.push({
      runId: loaded.header.runId,
      toolUseId: calledBy.toolUseId,
      state: view.state,
      turn: view.context.turn,
      task: view.context.task,
      usage: view.context.usage,
      budget: view.context.budget ?? null,
      costUsd: typeof view.context.costUsd === 'number' ? view.context.costUsd : null,
      store: candidate.store,
      children: await childRunsOf(candidate.store, loaded.header.runId, depth + 1, grandchildCalls),
    });
  }
  return children.sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
}

/** The id of every call in the journal's records: a child run can only have been started by one of them. */
export function callIdsOf(loaded: LoadedRun): Set<string> {
  const ids = new Set<string>();
  for (const { record } of loaded.records) for (const call of record.pending ?? []) ids.add(call.id);
  return ids;
}

/** The runs that may be the run's children: those named for it in its folder, or those its store says it waits for. */
async function candidatesOf(store: RunStore, runId: string, calls?: ReadonlySet<string>): Promise<Array<{ store: RunStore; read: () => Promise<LoadedRun> }>> {
  const folder = runsFolderOf(store);
  if (folder && calls) {
    const ids = new Set([...calls].map((call) => childRunIdOf(runId, call)));
    return [...ids]
      .filter((id) => fs.existsSync(path.join(folder.root, RUNS_DIR, id, JOURNAL_FILE)))
      .map((id) => {
        const child = folder.store(id);
        return { store: child, read: () => child.load({ fromLastSnapshot: true }) };
      });
  }
  if (folder) {
    const prefix = childPrefixOf(runId);
    return folder
      .entries({ idPrefix: prefix })
      .filter((entry) => !entry.archived && entry.folderId !== null && entry.folderId.startsWith(prefix))
      .map((entry) => ({ store: folder.store(entry.folderId!), read: () => entry.read() }));
  }
  if (!store.awaitedRuns) return [];
  return (await store.awaitedRuns()).map((child) => ({ store: child, read: () => child.load({ fromLastSnapshot: true }) }));
}
