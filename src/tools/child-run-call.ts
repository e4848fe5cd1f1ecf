/**
 * A tool whose calls each queue a run of their own, driven by whichever process takes it up (a
 * fleet's sub-agent), while the calling run waits for it without being driven. Such a call is not
 * run: it is flagged as it arrives (needs 'child'), the run rests in awaitingDecision like a run
 * waiting for a person, and the child's end is the DECISION that gives the call its result.
 */
import type { ChildOutcome, ChildRuns, QueuedChild } from './calling-run.ts';
import type { ToolContext, ToolDefinition } from './tool.ts';

export interface ChildRunCall {
  /** The id of the call's child run, derived from the run and the call. */
  runIdOf(ctx: ToolContext): string;
  /**
   * The child a call queues: its id (derived from the run and the call, so that queueing it again
   * queues nothing), agent, task, budget share, trace. Throws what the call's result must say when
   * no child can be queued (its share of the run's budget is spent).
   */
  childOf(input: unknown, ctx: ToolContext): Promise<QueuedChild>;
  /** The queue the call's child goes to: the calling run's (a fleet's), unless the tool keeps its children elsewhere. */
  queueOf(ctx: ToolContext): ChildRuns | null;
}

/** The end a call reads of its child: how it ended, or that the call's time to wait for it ran out. */
export type ChildEnd = ChildOutcome | { gaveUp: true; timeoutMs: number | undefined };

/** What marks the tool, whatever copies of it a program makes (a spread keeps it). */
const CHILD_RUN_CALL = Symbol.for('durable-agent.child-run-call');

export function withChildRunCall<T extends ToolDefinition>(tool: T, call: ChildRunCall): T {
  return Object.assign(tool, { [CHILD_RUN_CALL]: call });
}

/** The tool's child-run side, if it has one. */
export function childRunCallOf(tool: ToolDefinition | undefined): ChildRunCall | undefined {
  return tool === undefined ? undefined : (tool as { [CHILD_RUN_CALL]?: ChildRunCall })[CHILD_RUN_CALL];
}
