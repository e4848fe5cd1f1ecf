/**
 * What `run`'s flags give the run it drives, the same whether the run is an agent's (`--agents`)
 * or a task with the file tools: what a resume asks, and the run's options.
 */
import type { RunArgs } from './args.ts';

/** What `--resume` asks beyond the run's own, or null for a start. */
export function resumeAskedOf(args: RunArgs) {
  return args.resume ? { maxTurns: args.maxTurns, acceptLostRecord: args.acceptLostRecord, allowToolChange: args.allowToolChange, replaceDecisionPolicy: args.replaceDecisionPolicy, message: args.message } : null;
}

/** The run's options from its flags: limits, budget, compaction, approvals (unset ones stay the run's). */
export function runOptionsOf(args: RunArgs) {
  const { approval } = args;
  return {
    maxTokens: args.maxTokens,
    takeOver: args.takeOver,
    toolConcurrency: args.toolConcurrency,
    toolTimeoutMs: args.toolTimeoutMs,
    budget: args.budget,
    compaction: args.compaction,
    clearToolUses: args.clearToolUses,
    requireApproval: approval.requireApproval,
    // Not asked for: the agent's own rule stands (false would replace it).
    allowQuestions: approval.allowQuestions || undefined,
    decisionTimeoutMs: approval.decisionTimeoutMs,
  };
}
