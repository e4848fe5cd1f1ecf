/**
 * The machine's pure transition, exactly as xstate's `transition()` computes it, without the
 * throwaway actor `transition()` builds on every call (it computes, then discards, a whole
 * initial snapshot each time: about half the CPU of a transition). One inert actor scope is
 * made once and reused: the agent loop has no children, delays or emitted events, so a
 * transition leaves nothing in it for the next one.
 */
import { type AnyActorScope, createActor, type ExecutableActionsFrom, type SnapshotFrom } from 'xstate';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { AgentEvent } from '../../machines/agent-loop.types.ts';

type AgentLoopSnapshot = SnapshotFrom<typeof agentLoopMachine>;
type AgentLoopAction = ExecutableActionsFrom<typeof agentLoopMachine>;

let collected: AgentLoopAction[] = [];
const self = createActor(agentLoopMachine, { input: { task: '', maxTurns: 0 } });
const inertScope: AnyActorScope = {
  self,
  id: '',
  sessionId: '',
  logger: () => {},
  defer: () => {},
  emit: () => {},
  system: self.system,
  stopChild: () => {},
  actionExecutor: (action) => {
    collected.push(action as AgentLoopAction);
  },
};

export function machineStep(snapshot: AgentLoopSnapshot, event: AgentEvent): [AgentLoopSnapshot, AgentLoopAction[]] {
  collected = [];
  const next = agentLoopMachine.transition(snapshot, event, inertScope);
  return [next, collected];
}
