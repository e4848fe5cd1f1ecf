/**
 * The driver's machine step (src/runtime/machine-step.ts) is xstate's transition() without its
 * throwaway actor: on every step of every path of the crash suite it gives the same snapshot
 * and the same actions as xstate's own.
 */
import { describe, expect, it } from 'vitest';
import { initialTransition, transition as xstateTransition } from 'xstate';
import { agentLoopMachine } from '../machines/agent-loop.machine.ts';
import type { AgentEvent } from '../machines/agent-loop.types.ts';
import { transition } from '../src/runtime/machine-step.ts';
import { generateCrashPaths } from './model-based/crash-paths.ts';

const actionsOf = (actions: readonly { type: string; params?: unknown }[]) => actions.map((action) => ({ type: action.type, params: action.params }));

describe('the machine step', () => {
  it('matches xstate’s transition() on every step of every crash path', () => {
    const { paths } = generateCrashPaths();
    let steps = 0;
    for (const crashPath of paths) {
      const { maxTurns, maxPausesInARow } = crashPath.scenario;
      let [snapshot] = initialTransition(agentLoopMachine, { task: 'the task', maxTurns, maxPausesInARow });
      for (const step of crashPath.steps.slice(1)) {
        const event = step.event as unknown as AgentEvent;
        const [ours, ourActions] = transition(agentLoopMachine, snapshot, event);
        const [theirs, theirActions] = xstateTransition(agentLoopMachine, snapshot, event);
        expect(ours.value, `path ${crashPath.id}`).toEqual(theirs.value);
        expect(ours.context, `path ${crashPath.id}`).toEqual(theirs.context);
        expect(ours.status).toBe(theirs.status);
        expect(actionsOf(ourActions)).toEqual(actionsOf(theirActions));
        snapshot = ours;
        steps += 1;
      }
    }
    expect(steps).toBeGreaterThan(500);
  });

  it('an event the state does not take leaves the snapshot as it is, as xstate’s does', () => {
    const [snapshot] = initialTransition(agentLoopMachine, { task: 't', maxTurns: 1, maxPausesInARow: 1 });
    const event = { type: 'CLOSE_TURN' } as AgentEvent;
    expect(transition(agentLoopMachine, snapshot, event)[0]).toBe(snapshot);
    expect(xstateTransition(agentLoopMachine, snapshot, event)[0]).toBe(snapshot);
  });
});
