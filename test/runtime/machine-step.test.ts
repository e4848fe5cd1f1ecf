/**
 * The driver's machine step (src/runtime/machine-step.ts) is xstate's transition() without its
 * throwaway actor: on every step of every path of the crash suite it gives the same snapshot
 * and the same actions as xstate's own; a reply's MODEL_USAGE, counted in place without it
 * (src/runtime/usage-step.ts), gives the snapshot xstate's gives.
 */
import { describe, expect, it } from 'vitest';
import { initialTransition, transition as xstateTransition } from 'xstate';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { effectOfActions } from '../../machines/agent-loop.effects.ts';
import type { AgentEvent } from '../../machines/agent-loop.types.ts';
import { ZERO_USAGE } from '../../machines/agent-loop.types.ts';
import { transition } from '../../src/runtime/machine-step.ts';
import { usageCountedInPlace } from '../../src/runtime/usage-step.ts';
import { generateCrashPaths } from '../model-based/crash-paths.ts';

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

  it('a reply’s MODEL_USAGE counted in place is xstate’s transition, on every usage step of every crash path and with a cost budget', () => {
    const { paths } = generateCrashPaths();
    let counted = 0;
    for (const crashPath of paths) {
      const { maxTurns, maxPausesInARow } = crashPath.scenario;
      let [snapshot] = initialTransition(agentLoopMachine, { task: 'the task', maxTurns, maxPausesInARow });
      for (const step of crashPath.steps.slice(1)) {
        const event = step.event as unknown as AgentEvent;
        if (event.type === 'MODEL_USAGE') {
          const costed = agentLoopMachine.resolveState({ value: snapshot.value, context: { ...snapshot.context, budget: { maxCostUsd: 1 }, costUsd: 0.125 } });
          for (const [before, costUsd] of [[snapshot, undefined], [costed, 0.25]] as const) {
            const usage = { ...event, ...(costUsd === undefined ? {} : { costUsd }) };
            const ours = usageCountedInPlace(before, usage);
            const [theirs, theirActions] = xstateTransition(agentLoopMachine, before, usage);
            expect(ours, `path ${crashPath.id}`).not.toBeNull();
            expect(ours!.value).toEqual(theirs.value);
            expect(ours!.status).toBe(theirs.status);
            // The same fields in the same order: the record written from it is the same bytes.
            expect(JSON.stringify(ours!.context)).toBe(JSON.stringify(theirs.context));
            expect(effectOfActions(theirActions)).toBeNull();
          }
          counted += 1;
        }
        snapshot = transition(agentLoopMachine, snapshot, event)[0];
      }
    }
    expect(counted).toBeGreaterThan(500);
  });

  it('MODEL_USAGE where the machine does not count it in place goes through transition(): the fast path declines', () => {
    const [snapshot] = initialTransition(agentLoopMachine, { task: 't', maxTurns: 1, maxPausesInARow: 1 });
    const done = agentLoopMachine.resolveState({ value: 'done', context: snapshot.context });
    expect(usageCountedInPlace(done, { type: 'MODEL_USAGE', usage: ZERO_USAGE })).toBeNull();
  });

  it('an event the state does not take leaves the snapshot as it is, as xstate’s does', () => {
    const [snapshot] = initialTransition(agentLoopMachine, { task: 't', maxTurns: 1, maxPausesInARow: 1 });
    const event = { type: 'CLOSE_TURN' } as AgentEvent;
    expect(transition(agentLoopMachine, snapshot, event)[0]).toBe(snapshot);
    expect(xstateTransition(agentLoopMachine, snapshot, event)[0]).toBe(snapshot);
  });
});
