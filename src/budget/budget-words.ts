/** A budget's figures in words, shared by the plain output, the live view and status. Pure. */
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import type { Budget, BudgetStop, TokenUsage } from '../../machines/agent-loop.types.ts';

export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  if (usd < 1) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}

function formatTokens(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * "budget reached: $0.0123 of $0.0100" or "tenant acme's monthly quota reached: $200.01 of $200.00
 * (at list prices) in 2026-12 (UTC)", or "budget reached: 1,234 of 1,000 tokens"; a stop before
 * a call that could pass the limit says so: "…: 100 of 190 tokens, and the next model call could
 * spend up to 150 more".
 */
export function budgetReachedWords(stop: BudgetStop): string {
  if (stop.tenant !== undefined) {
    const figures = stop.budget === 'cost' ? `${formatUsd(stop.spent)} of ${formatUsd(stop.limit)} (at list prices)` : `${formatTokens(stop.spent)} of ${formatTokens(stop.limit)} tokens`;
    return `tenant ${stop.tenant}'s monthly quota reached: ${figures} in ${stop.month ?? 'this month'} (UTC)`;
  }
  const next = stop.nextCall === undefined ? '' : `, and the next model call could spend up to ${stop.budget === 'cost' ? formatUsd(stop.nextCall) : formatTokens(stop.nextCall)} more`;
  return stop.budget === 'cost'
    ? `budget reached: ${formatUsd(stop.spent)} of ${formatUsd(stop.limit)} (at list prices)${next}`
    : `budget reached: ${formatTokens(stop.spent)} of ${formatTokens(stop.limit)} tokens${next}`;
}

/** What is spent against each limit, and what is left: "cost $0.0123 of $0.0500 ($0.0377 left) · tokens 1,234 of 10,000 (8,766 left)". */
export function budgetWords(budget: Budget, usage: TokenUsage, costUsd: number | null | undefined): string {
  const parts: string[] = [];
  if (budget.maxCostUsd !== undefined) {
    const spent = costUsd ?? 0;
    parts.push(`cost ${formatUsd(spent)} of ${formatUsd(budget.maxCostUsd)} (${formatUsd(Math.max(0, budget.maxCostUsd - spent))} left)`);
  }
  if (budget.maxTotalTokens !== undefined) {
    const spent = totalTokens(usage);
    parts.push(`tokens ${formatTokens(spent)} of ${formatTokens(budget.maxTotalTokens)} (${formatTokens(Math.max(0, budget.maxTotalTokens - spent))} left)`);
  }
  return parts.join(' · ');
}

/** The flag and a value that goes on after a stop: twice the limit, and above what is spent (with the next call's worst case, when that stopped it). */
export function largerBudgetWords(stop: BudgetStop): string[] {
  const next = stop.nextCall ?? 0;
  if (stop.budget === 'tokens') return ['--max-total-tokens', String(Math.max(stop.limit * 2, stop.spent + next + 1))];
  const cents = Math.ceil(Math.max(stop.limit * 2, stop.spent * 1.5, (stop.spent + next) * 1.5) * 100);
  return ['--max-cost-usd', (cents / 100).toFixed(2)];
}
