/**
 * The calls that wait for a person in a run and in the runs under it (run-tree.ts), and where a
 * decision about one of them goes. Apart from the tree itself: status and history read the tree
 * and decide nothing.
 */
import type { DecideInput } from '../awaits/decide.ts';
import { type PendingDecision, pendingDecisions } from '../awaits/pending-decisions.ts';
import type { RunStore } from '../store/store.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { type ChildRun, childRunsOf } from './run-tree.ts';

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
