/**
 * The runtime's half of src/tools/calling-run.ts (which says what a tool sees of its caller):
 * what the runtime tells a tool of the run that calls it (ToolContext.caller), and what the calls
 * of a closing turn spent on the run's behalf (ToolBase.charge): a sub-agent's child run is
 * charged to its parent when the turn closes, in the same write as the close, so that a crash
 * can neither lose the charge nor count it twice.
 */
import { addUsage, totalTokens } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, Budget, PendingCall, TokenUsage } from '../../machines/agent-loop.types.ts';
import { replyCostUsd } from '../budget/budget.ts';
import type { Model } from '../model/model.ts';
import type { RunStore } from '../store/store.ts';
import type { CallCharge, CallingRun, CallTrace, ChildRuns } from '../tools/calling-run.ts';
import { LazyAbort, toolContextFor } from '../tools/execute-call.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';

export interface CallerParts {
  readonly runId: string;
  readonly tenant: string;
  readonly store: RunStore;
  readonly registry: ToolRegistry;
  readonly model: Model;
  readonly traceCall?: ((toolUseId: string) => CallTrace | undefined) | undefined;
  readonly childRuns?: ChildRuns | undefined;
}

/** Whether any tool of the run charges it (only then is a turn's close asked for charges). */
export function anyToolCharges(registry: ToolRegistry): boolean {
  return registry.names.some((name) => registry.get(name)?.charge !== undefined);
}

/** The caller a call of the run sees: its budget share and trace are worked out only if the tool reads them. */
export function callerFor(parts: CallerParts, context: AgentContext, call: PendingCall): CallingRun {
  return new CallerView(parts, context, call);
}

/**
 * A class, not an object literal with getters: such a literal makes two closures and a slow
 * object at every call (about 0.6 µs), and one is made for every call the run makes.
 */
class CallerView implements CallingRun {
  readonly store: RunStore;
  readonly childRuns: ChildRuns | undefined;
  readonly tenant: string;

  constructor(
    private readonly parts: CallerParts,
    private readonly context: AgentContext,
    private readonly call: PendingCall,
  ) {
    this.store = parts.store;
    this.childRuns = parts.childRuns;
    this.tenant = parts.tenant;
  }

  get budgetShare(): Budget | null {
    const { context, parts } = this;
    return budgetShareOf(context, context.pending.filter((open) => parts.registry.get(open.name)?.charge !== undefined).length);
  }

  get trace(): CallTrace | undefined {
    return this.parts.traceCall?.(this.call.id);
  }
}

/** What is left of the run's budget, shared by `sharing` calls (at least one); a limit left may be 0 or less. */
export function budgetShareOf(context: Pick<AgentContext, 'budget' | 'usage' | 'costUsd'>, sharing: number): Budget | null {
  const { budget } = context;
  if (!budget || (budget.maxCostUsd === undefined && budget.maxTotalTokens === undefined)) return null;
  const ways = Math.max(1, sharing);
  const share: Budget = {};
  if (budget.maxTotalTokens !== undefined) share.maxTotalTokens = Math.floor((budget.maxTotalTokens - totalTokens(context.usage)) / ways);
  if (budget.maxCostUsd !== undefined) share.maxCostUsd = (budget.maxCostUsd - (typeof context.costUsd === 'number' ? context.costUsd : 0)) / ways;
  return share;
}

/** What the calls of the closing turn spent on the run's behalf, summed (null: nothing), and which calls. */
export async function turnCharge(parts: CallerParts, context: AgentContext): Promise<{ usage: TokenUsage; costUsd?: number; calls: string[] } | null> {
  let usage: TokenUsage | null = null;
  let cost = 0;
  let priced = true;
  const calls: string[] = [];
  for (const call of context.pending) {
    const tool = parts.registry.get(call.name);
    if (!tool?.charge) continue;
    const typed = await parts.registry.typedInput(call.name, call.input);
    if ('problem' in typed) continue;
    const charge: CallCharge | null = await tool.charge(typed.input, toolContextFor(parts.runId, call, new LazyAbort(), callerFor(parts, context, call)));
    if (!charge) continue;
    calls.push(call.id);
    usage = usage ? addUsage(usage, charge.usage) : { ...charge.usage };
    const costUsd = charge.costUsd ?? replyCostUsd(context, charge.usage, parts.model);
    if (costUsd === undefined) priced = false;
    else cost += costUsd;
  }
  if (!usage) return null;
  return priced ? { usage, costUsd: cost, calls } : { usage, calls };
}
