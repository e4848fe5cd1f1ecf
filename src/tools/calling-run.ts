/**
 * What a tool sees of the run that calls it, for a tool that runs a run of its own under the
 * call (a sub-agent): the caller's store (a pause asked of it), its budget, and its trace. Made
 * by the runtime for each call it runs; absent where no run drives the call.
 */
import type { Budget, TokenUsage } from '../../machines/agent-loop.types.ts';
import type { RunStore } from '../store/store.ts';

export interface CallingRun {
  /** The store of the calling run: its control inbox says when the run is paused. */
  readonly store: RunStore;
  /** Whose the calling run is: a run the call starts is the same tenant's. */
  readonly tenant: string;
  /**
   * What this call may spend of the calling run's budget: what is left of it, shared evenly by
   * the calls of the reply whose tools charge the run (ToolBase.charge). Null: the run has no budget.
   */
  readonly budgetShare: Budget | null;
  /** With a tracer: how a run made by the call is traced under the call's execute_tool span. */
  readonly trace?: CallTrace | undefined;
  /**
   * Where a run made by the call is queued to be driven by any worker, while the calling run
   * waits for it without being driven (a fleet's); absent: the call drives it itself.
   */
  readonly childRuns?: ChildRuns | undefined;
}

/** Runs queued by a call, each driven by whichever worker takes it up. */
export interface ChildRuns {
  /**
   * Queues the child (a second submit of its id queues nothing) and notes that the calling run
   * waits for it: the calling run is not taken up again until the child has ended.
   */
  submit(child: QueuedChild): Promise<void>;
  /**
   * How the child ended; null while it goes on, waits or is not yet taken up. `gaveUp`: the
   * call's time to wait for it (QueuedChild.timeoutMs) ran out first; the child goes on.
   */
  outcome(childRunId: string): Promise<ChildOutcome | { gaveUp: true } | null>;
  /** The child's store, to read (what it spent). */
  store(childRunId: string): RunStore;
}

export interface QueuedChild {
  runId: string;
  /** Whose the calling run is, and so the child's. */
  tenant: string;
  /** The agent's name, as a worker registered it. */
  agent: string;
  task: string;
  calledBy: { runId: string; toolUseId: string };
  budget?: Budget | undefined;
  /** With a tracer: the W3C traceparent of the call's execute_tool span, which the child's trace hangs under. */
  traceParent?: string | undefined;
  /** How long the calling run waits for the child from its first queueing before the call gives up; absent: for ever. */
  timeoutMs?: number | undefined;
}

export interface ChildOutcome {
  /** done, failed, cancelled, or a stop at a limit. */
  state: string;
  text: string | null;
  failure: string | null;
}

export interface CallTrace {
  /** The calling run's tracer (an OpenTelemetry Tracer). */
  readonly tracer: unknown;
  /** Whether the calling run exports content (messages, inputs, results). */
  readonly content: boolean;
  /** The OpenTelemetry Context whose span is the call's execute_tool span. */
  readonly parent: unknown;
}

/** What a call spent on its run's behalf beyond the run's own model calls (a sub-agent's child run). */
export interface CallCharge {
  readonly usage: TokenUsage;
  /** In US dollars at list prices, when known; absent: priced at the calling run's model. */
  readonly costUsd?: number | undefined;
}
