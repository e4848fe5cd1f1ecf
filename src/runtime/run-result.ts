/** What a run ended with (or stopped at), as startRun and resumeRun return it. */
import type { AgentContext, AgentStateName } from '../../machines/agent-loop.types.ts';
import { waitingCallsOf } from '../awaits/waiting-calls.ts';
import { budgetViewOf } from '../budget/budget.ts';
import type { RunResult, RunStatusName } from '../core/run-events.ts';

export function runResultOf(runId: string, state: AgentStateName, context: AgentContext): RunResult {
  const waiting = state === 'awaitingDecision';
  return {
    runId,
    status: (waiting ? 'waiting' : state) as RunStatusName,
    ...(waiting ? { waiting: waitingCallsOf(runId, context) } : {}),
    text: context.finalText,
    failure: context.failure,
    turn: context.turn,
    maxTurns: context.maxTurns,
    usage: context.usage,
    ...budgetViewOf(context),
    ...(context.cancellation ? { cancellation: context.cancellation } : {}),
  };
}
