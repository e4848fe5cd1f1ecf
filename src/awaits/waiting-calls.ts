/** Which calls of a run wait for a person, read from the snapshot alone (the journal holds the flags). */
import { awaitsDecision, openCalls } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, DecisionNeed } from '../../machines/agent-loop.types.ts';
import type { WaitingCall } from '../core/run-events.ts';

export function waitingCallsOf(runId: string, context: AgentContext): WaitingCall[] {
  return openCalls(context)
    .filter((call) => awaitsDecision(context, call))
    .map((call) => {
      const awaited = context.awaiting?.tool_use_id === call.id;
      return {
        runId,
        tool_use_id: call.id,
        name: call.name,
        input: call.input,
        needs: call.needs as DecisionNeed,
        since: awaited ? context.awaiting!.since : null,
        awaited,
      };
    });
}
