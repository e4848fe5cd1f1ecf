/**
 * A child's budget: its share of what is left of its parent's (the remainder shared evenly by the
 * reply's sub-agent calls, so that children side by side cannot together spend more than the
 * parent has: the child's run stops before a call whose worst case would pass its share, see
 * budgetCapabilityOf), and no more than its own agent's budget. What it spends is charged to the parent
 * when the turn closes, so the parent's next model call sees it. The share is the same on every
 * resume of the parent within the turn (the parent's spending does not change until the turn
 * closes), so a child re-attached is given the budget it started with.
 */
import type { Budget } from '../../machines/agent-loop.types.ts';
import type { AgentDefinition } from '../agent/agent-definition.ts';
import { MAX_COST_USD_RANGE, MAX_TOTAL_TOKENS_RANGE } from '../budget/budget.ts';
import type { RunStore } from '../store/store.ts';
import type { CallingRun } from '../tools/tool.ts';
import { SubagentBudgetSpentError } from './subagent-errors.ts';

/** The budget the child runs with (undefined: its agent's own, if any); throws SubagentBudgetSpentError for a child not started when nothing is left. */
export async function childBudgetOf(agent: AgentDefinition, caller: CallingRun | undefined, store: RunStore, parentRunId: string): Promise<Budget | undefined> {
  const share = caller?.budgetShare ?? null;
  if (!share) return undefined;
  const own = agent.budget ?? {};
  const budget: Budget = {};
  if (share.maxTotalTokens !== undefined) budget.maxTotalTokens = Math.min(share.maxTotalTokens, own.maxTotalTokens ?? Infinity);
  else if (own.maxTotalTokens !== undefined) budget.maxTotalTokens = own.maxTotalTokens;
  if (share.maxCostUsd !== undefined) budget.maxCostUsd = Math.min(share.maxCostUsd, own.maxCostUsd ?? Infinity);
  else if (own.maxCostUsd !== undefined) budget.maxCostUsd = own.maxCostUsd;
  const spent = (budget.maxTotalTokens !== undefined && budget.maxTotalTokens < MAX_TOTAL_TOKENS_RANGE.min) || (budget.maxCostUsd !== undefined && budget.maxCostUsd < MAX_COST_USD_RANGE.min);
  if (!spent) return budget;
  // A child that started when there was some left keeps the budget it has: it stops by it.
  if (await store.exists()) return undefined;
  throw new SubagentBudgetSpentError(agent.name, parentRunId, share);
}
