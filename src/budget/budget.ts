/**
 * A run's budgets: spending limits checked before each model call. A budget belongs to the run,
 * not to the process driving it: it is kept in the run's context (record 0, and the REOPEN
 * record of a resume that changes it: the machine applies the change and lifts a budget stop),
 * so a plain resume applies it, and a resume that gives a budget replaces it for the rest of the
 * run (the header is written once and could not follow).
 */
import { budgetStopOf } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, Budget, BudgetChange, BudgetStop, NextCallWorstCase, TokenUsage } from '../../machines/agent-loop.types.ts';
import { needsVersion, type RunSetting } from '../core/run-settings.ts';
import type { Capability, RunSession } from '../core/session.ts';
import { estimateRequestTokens } from '../model/estimate-tokens.ts';
import type { Model } from '../model/model.ts';
import { costAt, type ModelPrice, priceOf } from '../model/prices.ts';
import { JOURNAL_VERSION_BUDGETS } from '../store/journal/journal-record.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** Wide enough for any real use, narrow enough that a typo (or Infinity) is refused. */
export const MAX_COST_USD_RANGE = { min: 0.0001, max: 1_000_000 } as const;
export const MAX_TOTAL_TOKENS_RANGE = { min: 1, max: 1_000_000_000_000 } as const;

/** A cost budget for a model whose price is not known: refused before anything is written. */
export class BudgetPriceError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'BudgetPriceError';
  constructor(
    readonly model: string,
    readonly maxCostUsd: number,
  ) {
    super(
      `A cost budget ($${maxCostUsd}) needs the price of the model, and ${model} has none in the price table (src/model/prices.ts). ` +
        'Give a token budget instead (--max-total-tokens N, budget.maxTotalTokens), or a model with a price. Nothing was written to the journal of the run.',
    );
  }
}


/** The budget as given, checked; undefined when it sets no limit. Throws RangeError (nothing started). */
export function checkBudget(given: Budget | undefined): Budget | undefined {
  if (!given) return undefined;
  const budget: Budget = {};
  const { maxCostUsd, maxTotalTokens } = given;
  if (maxCostUsd !== undefined) {
    const { min, max } = MAX_COST_USD_RANGE;
    if (!(typeof maxCostUsd === 'number' && maxCostUsd >= min && maxCostUsd <= max)) {
      throw new RangeError(`budget.maxCostUsd must be US dollars from ${min} to ${max} (got ${String(maxCostUsd)}); nothing was written.`);
    }
    budget.maxCostUsd = maxCostUsd;
  }
  if (maxTotalTokens !== undefined) {
    const { min, max } = MAX_TOTAL_TOKENS_RANGE;
    if (!(Number.isSafeInteger(maxTotalTokens) && maxTotalTokens >= min && maxTotalTokens <= max)) {
      throw new RangeError(`budget.maxTotalTokens must be a whole number from ${min} to ${max} (got ${String(maxTotalTokens)}); nothing was written.`);
    }
    budget.maxTotalTokens = maxTotalTokens;
  }
  return Object.keys(budget).length > 0 ? budget : undefined;
}

/** The price of a reply: the model's own, else the table's for the model that answered, else for the name asked. */
export function priceFor(model: Model, answeredBy?: string | null): ModelPrice | null {
  return model.price ?? (answeredBy ? priceOf(answeredBy) : null) ?? priceOf(model.name);
}

/** A new run's budget, for the machine's input. */
export function startingBudget(given: BudgetGiven): { budget?: Budget; costUsd?: number } {
  const budget = checkBudget(given.budget);
  if (!budget) return {};
  if (budget.maxCostUsd !== undefined && !priceFor(given.model)) throw new BudgetPriceError(given.model.name, budget.maxCostUsd);
  return { budget, ...(budget.maxCostUsd !== undefined ? { costUsd: 0 } : {}) };
}

/**
 * What a resume changes in the run's budget: each limit given replaces the run's own (larger
 * or smaller), the others stay. Null when nothing changes. A cost budget the run did not have
 * starts from what the run has used so far, priced at this model's list price. Throws
 * BudgetPriceError when the run's cost budget (its own or the one given) cannot be priced.
 */
export function resumedBudget(context: AgentContext, given: BudgetGiven): BudgetChange | null {
  const asked = checkBudget(given.budget);
  const budget: Budget | null = asked ? { ...context.budget, ...asked } : (context.budget ?? null);
  const price = priceFor(given.model);
  if (budget?.maxCostUsd !== undefined && !price) throw new BudgetPriceError(given.model.name, budget.maxCostUsd);
  // A tenant's quota is not the run's to change: its stop is lifted by giving the run the budget it
  // has (the machine's REOPEN lifts a budget stop), and the quota is checked again before the call.
  if (given.liftTenantQuota && context.budgetStop?.tenant !== undefined && (!asked || sameBudget(context.budget ?? null, budget))) {
    return { budget, costUsd: context.costUsd ?? undefined };
  }
  if (!asked || sameBudget(context.budget ?? null, budget)) return null;
  const costUsd = budget?.maxCostUsd === undefined ? undefined : typeof context.costUsd === 'number' ? context.costUsd : costAt(price!, context.usage);
  return { budget, costUsd };
}

function sameBudget(a: Budget | null, b: Budget | null): boolean {
  return a?.maxCostUsd === b?.maxCostUsd && a?.maxTotalTokens === b?.maxTotalTokens;
}

/**
 * What a reply's tokens cost, for the machine's MODEL_USAGE to add: only a run with a cost budget
 * keeps a cost (undefined otherwise, and for a model with no price). Priced here, not in the
 * machine: the price table is the runtime's.
 */
export function replyCostUsd(context: AgentContext, usage: TokenUsage, model: Model, answeredBy?: string | null): number | undefined {
  if (context.budget?.maxCostUsd === undefined || typeof context.costUsd !== 'number') return undefined;
  const price = priceFor(model, answeredBy);
  return price ? costAt(price, usage) : undefined;
}

/** The budget figures a run reports (events, results), present only for a run with a budget. */
export interface BudgetView {
  budget?: Budget | undefined;
  costUsd?: number | undefined;
  budgetStop?: BudgetStop | undefined;
}

export function budgetViewOf(context: AgentContext): BudgetView {
  // A tenant's quota stops a run without a budget of its own: its stop is still reported.
  if (!context.budget) return context.budgetStop ? { budgetStop: context.budgetStop } : {};
  return {
    budget: context.budget,
    ...(typeof context.costUsd === 'number' ? { costUsd: context.costUsd } : {}),
    ...(context.budgetStop ? { budgetStop: context.budgetStop } : {}),
  };
}

export { budgetStopOf };

/**
 * Budgets as a capability of the run: before each model call, a budget reached stops the run
 * (resumably) instead of the call. A sub-agent's run (its budget a share of its parent's, which
 * children side by side must not together pass) also stops before a call whose worst case, its
 * max_tokens and its estimated input, would pass the share: a check of what was spent alone
 * lets the last reply overshoot. A run of its own keeps the plain check: its limit is its
 * owner's to stretch on resume, and a large max_tokens would otherwise stop it long before it.
 */
export function budgetCapabilityOf(nextCallLimited: { maxTokens: number } | null): Capability {
  return {
    name: 'budget',
    beforeModelCall(session) {
      const context = session.context();
      if (budgetStopOf(context)) return { type: 'BUDGET_REACHED' };
      // A reply held at MAX_TURNS is acted on without a call: nothing more is spent.
      if (!nextCallLimited || !context.budget || context.heldReply) return null;
      const nextCall = nextCallWorstCase(context, session, nextCallLimited.maxTokens);
      return budgetStopOf(context, nextCall) ? { type: 'BUDGET_REACHED', nextCall } : null;
    },
  };
}

/** The most the next model call could spend: all of max_tokens written after the request's estimated input, priced when the run keeps a cost. */
export function nextCallWorstCase(context: AgentContext, session: Pick<RunSession, 'model' | 'registry'>, maxTokens: number): NextCallWorstCase {
  const input = estimateRequestTokens(context.system, session.registry.specs, context.messages);
  const worst: NextCallWorstCase = { tokens: input + maxTokens };
  const price = context.budget?.maxCostUsd !== undefined ? priceFor(session.model) : null;
  if (price) worst.costUsd = costAt(price, { input, output: maxTokens, cacheRead: 0, cacheWrite: 0 });
  return worst;
}

/**
 * Budgets as a setting of the run. They are kept in its context, not its header, so a start
 * checks them (a cost budget needs a price: BudgetPriceError), puts them in the machine's input
 * and writes the journal as version 3, which a release before budgets refuses instead of
 * spending on; what a resume gives is applied by the machine (REOPEN: resumedBudget).
 */
export const budgetSetting: RunSetting<BudgetGiven> = {
  pin(run, given) {
    const input = startingBudget(given);
    return input.budget ? needsVersion({ ...run, input: { ...run.input, ...input } }, JOURNAL_VERSION_BUDGETS) : run;
  },
  reopen: (context, given) => {
    const budget = resumedBudget(context, given);
    return budget ? { budget } : null;
  },
  // A sub-agent's budget is a share of its parent's: its calls are checked by their worst case too.
  plug: (run, _given, parts) => ({ capability: budgetCapabilityOf(run.pinned.calledBy ? { maxTokens: parts.maxTokens } : null) }),
};

/** What the budget is given: the limits asked for, and the model whose price a cost budget needs. */
export interface BudgetGiven {
  budget: Budget | undefined;
  model: Model;
  /** Lift a stop at the run's tenant's quota (a fleet worker, asked to by a raise of the tenant's quota). */
  liftTenantQuota?: boolean | undefined;
}
