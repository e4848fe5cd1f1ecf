/**
 * The walk of a run taken up again (REOPEN): each final state but cancelled given what it
 * lacked (the user's next message, more turns, a retry after too many pauses), and every live
 * state of a small run (a two-call turn, one with a question, a compaction) killed right after
 * it is saved and resumed with more turns. Once taken up, the run is walked to its end only.
 */
import { awaitsDecision, openCalls } from '../../../machines/agent-loop.logic.ts';
import { type AgentStateName, FINAL_STATES, ZERO_USAGE } from '../../../machines/agent-loop.types.ts';
import { stopReply, toolUseReply } from '../../../src/model/scripted-model.ts';
import { approvalReplies } from './approval.ts';
import { compactionEvents, holdsLongText, longReplies } from './compaction.ts';
import { endTurnEvent, type PathEvent, type Snapshot, toolResultEvent } from './path-event.ts';

/** The walk's turn limit: a run whose limit is above it has been taken up already. */
export const REOPEN_WALK_TURNS = 1;

export const CONTINUING_MESSAGE = 'And one more thing?';

export function reopenEventsFor(snapshot: Snapshot): PathEvent[] {
  const reopened = snapshot.context.maxTurns > REOPEN_WALK_TURNS;
  const events = stepsOf(snapshot, reopened);
  const reopen = reopened ? null : reopenOf(snapshot);
  return reopen ? [...events, reopen] : events;
}

/** What taking the run up brings in this state, or null where nothing takes it up. */
function reopenOf({ value, context }: Snapshot): PathEvent | null {
  const maxTurns = context.maxTurns + 1;
  switch (value as AgentStateName) {
    case 'cancelled':
    case 'stoppedAtBudget':
      return null;
    case 'done':
      // A message after a long reply gives client compaction a second cut, which no walk follows.
      return context.messages.some(holdsLongText) ? null : { type: 'REOPEN', maxTurns, message: CONTINUING_MESSAGE, label: 'continued with a message' };
    case 'failed':
      return context.failure?.retryable ? { type: 'REOPEN', maxTurns, label: 'retried with more turns' } : null;
    case 'stoppedAtMaxTurns':
      return { type: 'REOPEN', maxTurns, label: 'resumed with more turns' };
    case 'effectRecorded':
      // Killed right after a call's outcome, the process would leave it to a resume's reconcile
      // (the crash suite's own case, which a crash before it meets again): only after an answer.
      return context.results.at(-1)?.kind === 'answered' ? { type: 'REOPEN', maxTurns, label: 'killed, resumed with more turns' } : null;
    default:
      return { type: 'REOPEN', maxTurns, label: 'killed, resumed with more turns' };
  }
}

/** The run's own steps: before it is taken up, a small run; after, its end. */
function stepsOf(snapshot: Snapshot, reopened: boolean): PathEvent[] {
  const state = snapshot.value as AgentStateName;
  const { context } = snapshot;
  if (FINAL_STATES.includes(state)) return [];
  if (state === 'awaitingModel' && context.heldReply) {
    // Reopened with more turns: the runtime acts on the reply held at MAX_TURNS, asking nothing.
    return [{ type: 'MODEL_REPLY', label: 'reply: held at MAX_TURNS', reply: { ...context.heldReply, usage: ZERO_USAGE }, held: true }];
  }
  // A summary without text fails the run for good in a scenario (its model gives only such summaries): not walked here.
  const compacting = compactionEvents(snapshot)?.filter((event) => event.type !== 'MODEL_REPLY_INVALID');
  if (compacting) return compacting;
  if (state === 'awaitingModel' || state === 'closed') {
    if (reopened) return [endTurnEvent()];
    const t = context.turn + 1;
    const twoCalls: PathEvent = {
      type: 'MODEL_REPLY',
      label: 'reply: lookup + charge_card',
      reply: toolUseReply([
        { id: `t${t}_lookup`, name: 'lookup', input: { q: `r${t}` } },
        { id: `t${t}_charge`, name: 'charge_card', input: { amount: t } },
      ]),
    };
    if (context.turn > 0) return [twoCalls, endTurnEvent()];
    // The walk allows no pause: the first fails the run (pause_limit), which a resume may retry.
    const pause = stopReply('pause_turn', 'thinking it over');
    return [twoCalls, endTurnEvent(), { type: 'MODEL_REPLY', label: 'reply: pause_turn', reply: pause }, ...approvalReplies(context).slice(1, 2), ...longReplies(context).slice(0, 1)];
  }
  if (state === 'pendingTool' || state === 'effectRecorded') {
    const call = openCalls(context)[0];
    if (!call) return [{ type: 'CLOSE_TURN', label: 'close turn' }];
    if (awaitsDecision(context, call)) return [{ type: 'DECISION_NEEDED', tool_use_id: call.id, at: 0, label: `${call.name} waits` }];
    return [toolResultEvent(call, 'ok')];
  }
  if (state === 'awaitingDecision') {
    const call = context.pending.find((pending) => pending.id === context.awaiting?.tool_use_id)!;
    return [{ type: 'DECISION', label: `${call.name} answered`, decision: { tool_use_id: call.id, verdict: 'answered', text: 'the second', by: 'api', at: 0 } }];
  }
  return [];
}
