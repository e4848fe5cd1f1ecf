/**
 * The effect a resting snapshot announces, derived from the snapshot alone. A live run takes
 * its effects from the actions `transition()` returns; a resumed run has only the snapshot, and
 * this function gives the same answer (the crash tests check the two agree on every path).
 */
import { openCalls } from './agent-loop.logic.ts';
import type { AgentContext, AgentStateName } from './agent-loop.types.ts';

export type AnnouncedEffect = 'requestModelReply' | 'runPendingTools' | 'requestTurnClose' | 'awaitDecision' | 'requestCompaction';

export const EFFECT_ACTIONS: readonly AnnouncedEffect[] = ['requestModelReply', 'runPendingTools', 'requestTurnClose', 'awaitDecision', 'requestCompaction'];

export function announcedEffectOf(state: AgentStateName, context: AgentContext): AnnouncedEffect | null {
  switch (state) {
    case 'awaitingModel':
    case 'closed':
      return 'requestModelReply';
    case 'pendingTool':
    case 'effectRecorded':
      return openCalls(context).length > 0 ? 'runPendingTools' : 'requestTurnClose';
    case 'awaitingDecision':
      return 'awaitDecision';
    case 'compacting':
      return 'requestCompaction';
    default:
      return null;
  }
}

/** The one effect among the actions a transition returned, if any. */
export function effectOfActions(actions: readonly { type: string }[]): AnnouncedEffect | null {
  let effect: AnnouncedEffect | null = null;
  for (const { type } of actions) {
    if (!(EFFECT_ACTIONS as readonly string[]).includes(type)) continue;
    if (effect !== null) {
      const effects = actions.map((action) => action.type).filter((name) => (EFFECT_ACTIONS as readonly string[]).includes(name));
      throw new Error(`a transition announced several effects: ${effects.join(', ')}`);
    }
    effect = type as AnnouncedEffect;
  }
  return effect;
}
