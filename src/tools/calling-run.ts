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
  /**
   * What this call may spend of the calling run's budget: what is left of it, shared evenly by
   * the calls of the reply whose tools charge the run (ToolBase.charge). Null: the run has no budget.
   */
  readonly budgetShare: Budget | null;
  /** With a tracer: how a run made by the call is traced under the call's execute_tool span. */
  readonly trace?: CallTrace | undefined;
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
