/** Budgets: checked before each model call; reaching one stops the run (exit 8), resumably. */
import type { Budget } from '../../../machines/agent-loop.types.ts';
import { option, type ValuesOf } from './option.ts';

export const maxCostUsd = option({
  key: 'maxCostUsd',
  type: 'decimal',
  value: 'USD',
  help:
    "stop cleanly (exit 8) before a model call once the run has cost USD dollars at list prices (needs the model's price); " +
    'kept with the run: a resume with a larger USD goes on',
  min: 0.0001,
  max: 1_000_000,
  api: 'budget.maxCostUsd',
});
export const maxTotalTokens = option({
  key: 'maxTotalTokens',
  type: 'integer',
  value: 'N',
  help: 'stop cleanly (exit 8) before a model call once the run has used N tokens (input, output, cache read and write); kept with the run',
  min: 1,
  max: 1_000_000_000_000,
  api: 'budget.maxTotalTokens',
});

export const budgetOptions = [maxCostUsd, maxTotalTokens] as const;

/** The run's budget as the API takes it; undefined when no limit was given. */
export function readBudget(values: ValuesOf<typeof budgetOptions>): Budget | undefined {
  const budget: Budget = {};
  if (values.maxCostUsd !== undefined) budget.maxCostUsd = values.maxCostUsd;
  if (values.maxTotalTokens !== undefined) budget.maxTotalTokens = values.maxTotalTokens;
  return Object.keys(budget).length > 0 ? budget : undefined;
}
