/**
 * The machine's states as lists, read off its state nodes, so that a state added to the machine
 * is in them without anyone copying it. They load the machine (and xstate): the commands that
 * read a journal without it (status, pending, approve, deny) use the copies in
 * agent-loop.types.ts, which test/machines/machine-structure.test.ts holds equal to these.
 */
import type { AnnouncedEffect } from './agent-loop.effects.ts';
import { agentLoopMachine } from './agent-loop.machine.ts';
import type { AgentStateName } from './agent-loop.types.ts';

const nodes = Object.values(agentLoopMachine.root.states);

function namesOf(list: typeof nodes): AgentStateName[] {
  return list.map((node) => node.key as AgentStateName);
}

/** Every state, in the machine's order. */
export const AGENT_STATES: readonly AgentStateName[] = namesOf(nodes);

const isFinal = (node: (typeof nodes)[number]): boolean => node.type === 'final';

/** The states a run ends in: none takes CANCEL; all but cancelled take REOPEN (a later process that brings what the run lacked). */
export const FINAL_STATES: readonly AgentStateName[] = namesOf(nodes.filter(isFinal));

/** Every state that is not final: each takes CANCEL and REOPEN (one handler each, on the machine's root). */
export const LIVE_STATES: readonly AgentStateName[] = namesOf(nodes.filter((node) => !isFinal(node)));

/** The states whose entry announces `effect` (which the runtime carries out once the state is durable). */
export function statesEnteredWith(effect: AnnouncedEffect): AgentStateName[] {
  return namesOf(nodes.filter((node) => node.entry.some((action) => actionType(action) === effect)));
}

function actionType(action: unknown): string | null {
  if (typeof action === 'string') return action;
  return typeof (action as { type?: unknown } | null)?.type === 'string' ? (action as { type: string }).type : null;
}
