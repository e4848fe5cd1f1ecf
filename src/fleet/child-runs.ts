/**
 * The runs a fleet run's sub-agent calls make, queued as runs of their own (da_runs, under the id
 * the call derives), so that any worker drives them while the calling run waits for them in
 * awaitingDecision without holding a slot (child-step.ts): queueing notes which run waits for
 * which (da_child_waits), and a child's end is delivered to its caller's decisions, as a person's
 * decision is, which makes the caller claimable again (WORKABLE in leases.ts).
 */
import { STOPPED_AT_LIMIT_STATES } from '../../machines/agent-loop.types.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import { childStanding, noteChildWait } from '../store/pg/child-waits.ts';
import type { Database } from '../store/pg/pool.ts';
import type { ChildRuns, QueuedChild } from '../tools/calling-run.ts';
import { submitRun } from './submit-run.ts';
import { childEndDecision } from '../awaits/child-step.ts';
import { FINAL_STATES } from '../../machines/agent-loop.types.ts';
import type { RunResult } from '../core/run-events.ts';
import { openDatabaseStore } from '../store/pg/open-database-store.ts';
import type { KeysGiven } from '../seal/keys.ts';

const ENDED_AT_LIMIT: readonly string[] = STOPPED_AT_LIMIT_STATES;

/** `keys`: the worker's master keys; its children are submitted sealed with them, and read with them. */
export function fleetChildRuns(pool: Database, parentRunId: string, keys?: KeysGiven): ChildRuns {
  return {
    async submit(child: QueuedChild) {
      // The parent's worker drives its agent's sub-agents: the child's agent is registered by it.
      await submitRun(pool, { agent: child.agent, task: child.task, runId: child.runId, calledBy: child.calledBy, tenant: child.tenant, ...(child.budget ? { budget: child.budget } : {}), ...(child.traceParent ? { traceParent: child.traceParent } : {}), allowUnknownAgent: true, keys });
      await noteChildWait(pool, parentRunId, child.runId, child.timeoutMs ?? null);
    },
    async outcome(childRunId: string) {
      const child = await childStanding(pool, parentRunId, childRunId);
      const ended = child.state !== null && child.records > 0 && (child.finished || ENDED_AT_LIMIT.includes(child.state));
      if (!ended) return child.gaveUp ? { gaveUp: true as const } : null;
      const store = openDatabaseStore(pool, childRunId, { keys });
      const { state, context } = foldJournal(store.location, await store.load({ fromLastSnapshot: true }));
      return { state, text: context.finalText, failure: context.failure?.message ?? null };
    },
    store: (childRunId) => openDatabaseStore(pool, childRunId, { keys }),
  };
}

/**
 * Delivers a child's end to the run whose call queued it, as the decision that ends that call's
 * await: written once (a second delivery, or a person's denial first, leaves the first). A child
 * that rests without ending (it waits for a person) delivers nothing. A kill before the delivery
 * is mended by the caller, which reads its child's end itself when it is next taken up.
 */
export async function deliverChildEnd(
  pool: Database,
  child: { runId: string; agent: string; calledBy: { runId: string; toolUseId: string } },
  result: RunResult,
  keys?: KeysGiven,
): Promise<boolean> {
  if (!FINAL_STATES.includes(result.status as never)) return false;
  const end = { state: result.status, text: result.text ?? null, failure: result.failure?.message ?? null };
  const decision = childEndDecision(child.calledBy.toolUseId, child, end, Date.now());
  const caller = openDatabaseStore(pool, child.calledBy.runId, { keys });
  // A sealed caller's inbox seals what it is given: its run key is opened by reading the run first.
  if (keys !== undefined && (await caller.exists())) await caller.load({ fromLastSnapshot: true, finalRecord: true });
  return (await caller.decisions?.write(decision)) === 'written';
}
