/**
 * The `awaitDecision` effect for a call that waits for the child run it queued (needs 'child': a
 * fleet's sub-agent call). What ends the wait, in order: a decision in the run's inbox — the
 * child's end as its worker delivered it, or a person's denial (to stop waiting) —, the child's
 * end read from its own run (a delivery a kill lost is mended here), the call's time to wait for
 * it (counted from the DECISION_NEEDED record, so a resume never starts the clock again). Before
 * it looks, it queues the child of every open call of the turn that waits for one, so that the
 * children of one reply run side by side while the run waits for them one after another. When no
 * end is at hand and the run may not wait (a fleet worker), it says what it waits for and returns
 * null: the run rests, lets go of its worker, and is taken up again once there is a decision.
 * Nothing here writes the journal: the driver makes what it returns the DECISION record.
 */
import { decisionFor, openCalls } from '../../machines/agent-loop.logic.ts';
import type { Decision, PendingCall } from '../../machines/agent-loop.types.ts';
import type { ChildRuns } from '../tools/calling-run.ts';
import { type ChildEnd, childRunCallOf } from '../tools/child-run-call.ts';
import type { ToolContext } from '../tools/tool.ts';
import type { SignalInbox } from '../store/store.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { awaitedCallOf, type DecisionWait, fromInbox, lookUntilFound } from './decision-step.ts';

/** Who ends a child await whose time ran out (as a decision deadline does). */
export const GAVE_UP = 'deadline';

export interface ChildWait extends DecisionWait {
  /** The tool context of a call of the run, as a run of the call would see it (its budget share, its trace). */
  contextOf(call: PendingCall): ToolContext;
  /** Where the run tells a fleet when to take it up again without a decision (the call's time running out). */
  signals: SignalInbox | undefined;
  /** Told around each queueing: a child's trace hangs under its call's span, open meanwhile. */
  onQueue?: { before(call: PendingCall): void; after(call: PendingCall, childRunId: string): void } | undefined;
}

/** A call flagged to wait for its child whose tool cannot queue one in this process. */
export class ChildQueueMissingError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ChildQueueMissingError';
  constructor(
    readonly runId: string,
    readonly toolUseId: string,
    readonly tool: string,
  ) {
    super(
      `Run ${runId} waits for the child run its call ${toolUseId} (${tool}) queued for a fleet, and this process has no queue to find it in. ` +
        'Let a fleet worker take the run up (durable-agent worker with the agent registered), or give the run the childRuns it was started with.',
    );
  }
}

/** The decision that ends the awaited child call, or null when none is at hand and the run is not to wait (or was asked to stop). */
export async function findChildEnd(wait: ChildWait): Promise<Decision | null> {
  const call = awaitedCallOf(wait.context);
  const child = childRunCallOf(wait.registry.get(call.name));
  const ctx = wait.contextOf(call);
  const queue = child?.queueOf(ctx);
  if (!child || !queue) throw new ChildQueueMissingError(wait.runId, call.id, call.name);
  let queued: { runId: string; agent: string; timeoutMs?: number | undefined };
  try {
    queued = await child.childOf(call.input, ctx);
  } catch (error) {
    // No child can be queued (its share of the budget is spent): the call's result says why.
    const reason = error instanceof Error ? error.message : String(error);
    return { tool_use_id: call.id, verdict: 'denied', by: 'runtime', at: Date.now(), reason, child: { runId: child.runIdOf(ctx), state: 'not started' } };
  }
  await queueTurnChildren(wait, queue);
  const deadline = queued.timeoutMs === undefined ? Number.POSITIVE_INFINITY : wait.context.awaiting!.since + queued.timeoutMs;
  // Said before the run may stop (a fleet worker lets go of it): a claim reads it to take the run up when the call's time runs out.
  await wait.signals?.expect?.({ tool_use_id: call.id, event: null, wakeAt: Number.isFinite(deadline) ? deadline : null });
  const look = async (): Promise<Decision | null> => {
    const given = await fromInbox(wait, call);
    if (given) return given;
    const ended = await queue.outcome(queued.runId);
    if (ended) return childEndDecision(call.id, queued, 'gaveUp' in ended ? { gaveUp: true, timeoutMs: queued.timeoutMs } : ended, Date.now());
    return Date.now() >= deadline ? childEndDecision(call.id, queued, { gaveUp: true, timeoutMs: queued.timeoutMs }, deadline) : null;
  };
  return lookUntilFound(look, deadline, wait);
}

/**
 * Queues the children of the turn's open calls that wait for one and have no decision yet (each
 * queueing is idempotent: a child queued before is left as it is). A call whose child cannot be
 * queued is left to its own await, which says why.
 */
async function queueTurnChildren(wait: ChildWait, queue: ChildRuns): Promise<void> {
  for (const open of openCalls(wait.context)) {
    if (open.needs !== 'child' || decisionFor(wait.context, open.id)) continue;
    const child = childRunCallOf(wait.registry.get(open.name));
    if (!child) continue;
    const ctx = wait.contextOf(open);
    wait.onQueue?.before(open);
    try {
      const queued = await child.childOf(open.input, ctx);
      await queue.submit(queued);
      wait.onQueue?.after(open, queued.runId);
    } catch (error) {
      wait.onQueue?.after(open, child.runIdOf(ctx));
      if (open.id === wait.context.awaiting?.tool_use_id) throw error;
    }
  }
}

/**
 * The decision a child's end makes of the call that queued it: its answer, or a denial that says
 * how it ended (failed, cancelled, stopped at a limit) or that the call gave up waiting for it.
 * The same words whoever delivers it: the child's worker, or the waiting run reading the child.
 */
export function childEndDecision(toolUseId: string, child: { runId: string; agent: string }, end: ChildEnd, at: number): Decision {
  const by = `sub-agent run ${child.runId}`;
  if ('gaveUp' in end) {
    const within = end.timeoutMs === undefined ? '' : ` within ${end.timeoutMs} ms`;
    return {
      tool_use_id: toolUseId,
      verdict: 'denied',
      by: GAVE_UP,
      at,
      reason: `the sub-agent ${child.agent} (run ${child.runId}) did not end${within}: the call gave up on it, and the child goes on (its answer is in its own run)`,
      child: { runId: child.runId, state: 'running' },
    };
  }
  if (end.state === 'done') return { tool_use_id: toolUseId, verdict: 'answered', by, at, text: end.text ?? '(the sub-agent gave no answer)', child: { runId: child.runId, state: end.state } };
  return { tool_use_id: toolUseId, verdict: 'denied', by, at, reason: `the sub-agent ${child.agent} (run ${child.runId}) ended ${end.state}: ${end.failure ?? end.state}`, child: { runId: child.runId, state: end.state } };
}
