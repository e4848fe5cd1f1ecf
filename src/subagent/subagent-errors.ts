/** What a sub-agent call can be refused for: said with what to do next. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** The tool was given no folder for its child runs, and the calling run is not in a folder of runs. */
export class SubagentRunsUnknownError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'SubagentRunsUnknownError';
  constructor(
    readonly tool: string,
    /** Where the calling run is kept, when a run calls. */
    readonly callerLocation: string | null,
  ) {
    super(
      `The sub-agent tool ${tool} does not know where to keep its child run: ` +
        `${callerLocation ? `the calling run (${callerLocation}) is not in a folder of runs` : 'no run calls it'}. ` +
        'Give subagentTool the option runs (a FileRuns, or a store of a child run by its id). The child was not started.',
    );
  }
}

/** Nothing is left of the calling run's budget for a child that has not started: it is not started. */
export class SubagentBudgetSpentError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'SubagentBudgetSpentError';
  constructor(
    readonly tool: string,
    readonly parentRunId: string,
    /** What the call's share of the parent's budget is (what is left, shared by the reply's sub-agent calls). */
    readonly share: { maxTotalTokens?: number | undefined; maxCostUsd?: number | undefined },
  ) {
    super(
      `The sub-agent ${tool} was not started: nothing is left for it of the budget of its parent run ${parentRunId} ` +
        `(its share: ${[share.maxTotalTokens !== undefined ? `${share.maxTotalTokens} tokens` : null, share.maxCostUsd !== undefined ? `$${share.maxCostUsd.toFixed(4)}` : null].filter(Boolean).join(', ')}). ` +
        'Resume the parent with a larger budget (--max-total-tokens, --max-cost-usd) for it to be started.',
    );
  }
}

/** The tool's options describe an input it cannot take. */
export class SubagentInputError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'SubagentInputError';
  constructor(
    readonly tool: string,
    readonly problem: string,
  ) {
    super(`The sub-agent tool ${tool} cannot be made: ${problem}. Nothing was run; fix its options.`);
  }
}
