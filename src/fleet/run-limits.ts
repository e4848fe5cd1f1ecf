/**
 * What `submit` may ask of each run besides the task: a budget, compaction, tool result clearing.
 * Checked when the runs are queued, against the model the workers will build, so that a run a
 * worker could not start (a cost budget for a model without a price, server compaction for the
 * scripted model) is refused at once (exit 2, nothing queued) instead of failing in every worker
 * that claims it.
 */
import type { Budget } from '../../machines/agent-loop.types.ts';
import { BudgetPriceError, checkBudget } from '../budget/budget.ts';
import { checkClearToolUses, type ClearToolUsesOptions } from '../compaction/clear-tool-uses.ts';
import { checkCompactionOptions, type CompactionOptions, CompactionSettingsError } from '../compaction/compaction-settings.ts';
import { priceOf } from '../model/prices.ts';
import type { DemoRunSpec } from './run-queue.ts';

export interface RunLimits {
  budget?: Budget | undefined;
  compaction?: CompactionOptions | undefined;
  clearToolUses?: ClearToolUsesOptions | undefined;
}

/** The spec's fields for these limits (absent when not asked for); throws a refusal when a worker could not honour them. */
export function checkedRunLimits(model: string | null, scriptedName: string, toolNames: readonly string[], limits: RunLimits): Pick<DemoRunSpec, 'budget' | 'compaction' | 'clearToolUses'> {
  const name = model ?? scriptedName;
  const budget = checkBudget(limits.budget);
  if (budget?.maxCostUsd !== undefined && !priceOf(name)) throw new BudgetPriceError(name, budget.maxCostUsd);
  const { compaction, clearToolUses } = limits;
  checkCompactionOptions(compaction);
  if (model === null && compaction?.mode === 'server') {
    throw new CompactionSettingsError('Server compaction needs a Claude model through the Anthropic API; the scripted demo model is not one.', 'Submit with --model NAME, or --compact client --context-window N. Nothing was queued.');
  }
  if (model === null && compaction?.mode === 'client' && compaction.contextWindow === undefined) {
    throw new CompactionSettingsError('--compact client needs the context window, and the scripted demo model does not say what it is.', 'Give it with --context-window N. Nothing was queued.');
  }
  checkClearToolUses(clearToolUses, toolNames);
  if (model === null && clearToolUses) {
    throw new CompactionSettingsError('Clearing tool results (clear_tool_uses_20250919) is done by the Anthropic API; the scripted demo model does not use it.', 'Submit with --model NAME, or leave out --clear-tool-uses. Nothing was queued.');
  }
  return { ...(budget ? { budget } : {}), ...(compaction ? { compaction } : {}), ...(clearToolUses ? { clearToolUses } : {}) };
}
