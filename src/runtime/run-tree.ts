/**
 * The tree of runs a run's sub-agent calls started: each child run is kept in the folder of runs
 * its parent is in, under an id derived from the parent's id and the call's (childRunIdOf), with
 * the parent and the call in its header (calledBy). Found by the folder's names, confirmed by the
 * header: a stat per run of the folder and a read per child, nothing kept anywhere else.
 */
import { createHash } from 'node:crypto';
import type { AgentStateName, Budget, TokenUsage } from '../../machines/agent-loop.types.ts';
import { type DecideInput, type PendingDecision, pendingDecisions } from '../awaits/decide.ts';
import { runsFolderOf } from '../store/open-store.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import type { LoadedRun, RunStore } from '../store/store.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

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
 * for (a fleet's queued children), those; [] for any other store.
 */
export async function childRunsOf(store: RunStore, runId: string, depth = 0): Promise<ChildRun[]> {
  if (depth >= MAX_DEPTH) return [];
  const children: ChildRun[] = [];
  for (const candidate of await candidatesOf(store, runId)) {
    let loaded;
    try {
      loaded = await candidate.read();
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
      children: await childRunsOf(candidate.store, loaded.header.runId, depth + 1),
    });
  }
  return children.sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
}

/** The runs that may be the run's children: those named for it in its folder, or those its store says it waits for. */
async function candidatesOf(store: RunStore, runId: string): Promise<Array<{ store: RunStore; read: () => Promise<LoadedRun> }>> {
  const folder = runsFolderOf(store);
  if (folder) {
    const prefix = childPrefixOf(runId);
    return folder
      .entries()
      .filter((entry) => !entry.archived && entry.folderId !== null && entry.folderId.startsWith(prefix))
      .map((entry) => ({ store: folder.store(entry.folderId!), read: () => entry.read() }));
  }
  if (!store.awaitedRuns) return [];
  return (await store.awaitedRuns()).map((child) => ({ store: child, read: () => child.load({ fromLastSnapshot: true }) }));
}

/** Whether a run resting in this state may hold calls that wait for a person: it waits, or runs the calls of its turn before them. */
export function mayHaveWaitingCalls(state: string): boolean {
  return state === 'awaitingDecision' || state === 'pendingTool' || state === 'effectRecorded';
}

/** A call that waits for a person, in the run itself or in a run under it (`run`: that run's id). */
export interface TreePendingDecision extends PendingDecision {
  /** The sub-agent run that waits on the call; absent for the run's own calls. */
  run?: string | undefined;
  /** That run's store (a decision for the call goes to its inbox). */
  store?: RunStore | undefined;
}

/** The calls that wait for a person in the run and in the runs under it: the run's own first, then each child's, depth first. */
export async function treePendingDecisions(store: RunStore): Promise<TreePendingDecision[]> {
  const own: TreePendingDecision[] = await pendingDecisions(store);
  const { header } = await store.load({ fromLastSnapshot: true });
  const under: TreePendingDecision[] = [];
  const walk = async (children: readonly ChildRun[]) => {
    for (const child of children) {
      if (mayHaveWaitingCalls(child.state)) {
        for (const call of await pendingDecisions(child.store)) under.push({ ...call, run: child.runId, store: child.store });
      }
      await walk(child.children);
    }
  };
  await walk(await childRunsOf(store, header.runId));
  return [...own, ...under];
}

/** Two runs of the tree wait on calls of the same id: the decision must name the run. */
export class TreeCallAmbiguousError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'TreeCallAmbiguousError';
  constructor(
    readonly toolUseId: string,
    readonly runs: readonly string[],
  ) {
    super(`Calls of the id ${toolUseId} wait in ${runs.length} sub-agent runs (${runs.join(', ')}): decide in the one you mean by its id (the CLI's --run ID, or openRun on that run's store). Nothing was written.`);
  }
}

/**
 * The store a decision about `toolUseId` goes to: the run's own when it waits there (or waits
 * nowhere, so that the run's own refusal says why), else the one sub-agent run under it that waits on it.
 */
export async function deciderOf(store: RunStore, input: Pick<DecideInput, 'tool_use_id'>): Promise<RunStore> {
  const waiting = await treePendingDecisions(store);
  if (waiting.some((call) => call.run === undefined && call.tool_use_id === input.tool_use_id)) return store;
  const under = waiting.filter((call) => call.run !== undefined && call.tool_use_id === input.tool_use_id);
  if (under.length > 1) throw new TreeCallAmbiguousError(input.tool_use_id, under.map((call) => call.run!));
  return under[0]?.store ?? store;
}
