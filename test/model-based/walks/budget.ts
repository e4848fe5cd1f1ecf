/**
 * The budget walk: a run with a token budget that the first counted reply reaches. Before a
 * model call the budget is checked first (BUDGET_REACHED is then the only event); the replies
 * are a two-call turn (the stop comes after its tools, at checkpoint B) and a pause_turn (the
 * stop comes in awaitingModel), sent with its usage so that the runtime counts what the walk does.
 * A run stopped at the budget is then resumed with a larger one (REOPEN), and ends.
 */
import { budgetStopOf, openCalls } from '../../../machines/agent-loop.logic.ts';
import type { Budget } from '../../../machines/agent-loop.types.ts';
import { stopReply, toolUseReply } from '../../../src/model/scripted-model.ts';
import { PAUSE_TEXT } from './core.ts';
import { endTurnEvent, type PathEvent, type Snapshot, toolResultEvent } from './path-event.ts';

/** A budget the first reply reaches: the stop comes before the second model call. */
export const BUDGET_WALK: Budget = { maxTotalTokens: 1 };

/** What the run is resumed with once it stopped at the budget: room for the rest of it. */
export const RAISED_BUDGET: Budget = { maxTotalTokens: 1_000_000 };

export function budgetEventsFor(snapshot: Snapshot): PathEvent[] {
  const state = snapshot.value;
  const context = snapshot.context;
  const raised = context.budget?.maxTotalTokens === RAISED_BUDGET.maxTotalTokens;
  if (state === 'stoppedAtBudget' && !raised) {
    return [{ type: 'REOPEN', maxTurns: context.maxTurns, budget: { budget: RAISED_BUDGET }, label: 'resumed with a larger budget' }];
  }
  if (state === 'awaitingModel' || state === 'closed') {
    if (budgetStopOf(context)) return [{ type: 'BUDGET_REACHED', label: 'budget reached' }];
    // Taken up with a larger budget: the run is walked to its end only.
    if (raised) return [endTurnEvent()];
    const t = context.turn + 1;
    return [
      {
        type: 'MODEL_REPLY',
        label: 'reply: lookup + charge_card',
        reply: toolUseReply([
          { id: `t${t}_lookup`, name: 'lookup', input: { q: `b${t}` } },
          { id: `t${t}_charge`, name: 'charge_card', input: { amount: t } },
        ]),
      },
      { type: 'MODEL_REPLY', label: 'reply: pause_turn', reply: stopReply('pause_turn', PAUSE_TEXT) },
    ];
  }
  const call = openCalls(context)[0];
  if (!call) return state === 'pendingTool' || state === 'effectRecorded' ? [{ type: 'CLOSE_TURN', label: 'close turn' }] : [];
  return (['ok', 'throws'] as const).map((behaviour) => toolResultEvent(call, behaviour));
}

/** The cross walk of budgets: the budget walk's own events. */
export function inBudgetWalk(): boolean {
  return true;
}
