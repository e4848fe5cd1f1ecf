/**
 * The driver steps the machine with machineStep (one inert actor scope, reused) instead of
 * xstate's transition() (a throwaway actor per call). Both must give the same snapshot and the
 * same actions at every step, however many runs reuse the scope.
 */
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { agentLoopMachine } from '../machines/agent-loop.machine.ts';
import type { AgentEvent, ToolOutcome } from '../machines/agent-loop.types.ts';
import { endTurnReply, stopReply, toolUseReply } from '../src/model/scripted-model.ts';
import { machineStep } from '../src/runtime/machine-step.ts';

const ran = (id: string): ToolOutcome => ({ tool_use_id: id, name: 'tool', kind: 'ran', content: `${id} done`, is_error: false });

/** Every kind of transition: parallel calls out of order, a pause, MAX_TURNS, a refusal, an invalid reply, the end. */
const runs: AgentEvent[][] = [
  [
    { type: 'MODEL_REPLY', reply: toolUseReply([{ id: 'a', name: 'tool', input: {} }, { id: 'b', name: 'tool', input: {} }]) },
    { type: 'TOOL_RESULT', outcome: ran('b') },
    { type: 'TOOL_RESULT', outcome: ran('a') },
    { type: 'CLOSE_TURN' },
    { type: 'MODEL_REPLY', reply: stopReply('pause_turn', 'thinking') },
    { type: 'MODEL_REPLY', reply: toolUseReply([{ id: 'c', name: 'tool', input: {} }]) },
    { type: 'TOOL_RESULT', outcome: ran('c') },
    { type: 'CLOSE_TURN' },
    { type: 'MODEL_REPLY', reply: toolUseReply([{ id: 'd', name: 'tool', input: {} }]) },
  ],
  [{ type: 'MODEL_REPLY', reply: stopReply('refusal') }],
  [{ type: 'MODEL_REPLY_INVALID', reason: 'no content', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } }],
  [
    { type: 'MODEL_REPLY', reply: toolUseReply([{ id: 'e', name: 'tool', input: {} }]) },
    { type: 'TOOL_RESULT', outcome: ran('e') },
    { type: 'CLOSE_TURN' },
    { type: 'MODEL_REPLY', reply: endTurnReply('done') },
  ],
];

describe('machineStep', () => {
  it('gives what transition() gives at every step, run after run', () => {
    let steps = 0;
    for (const events of [...runs, ...runs]) {
      let [ours] = initialTransition(agentLoopMachine, { task: 'the task', maxTurns: 2 });
      let theirs = ours;
      for (const event of events) {
        const [next, actions] = machineStep(ours, event);
        const [expected, expectedActions] = transition(agentLoopMachine, theirs, event);
        expect(next.value).toEqual(expected.value);
        expect(next.status).toEqual(expected.status);
        expect(next.context).toEqual(expected.context);
        expect(actions.map((action) => action.type)).toEqual(expectedActions.map((action) => action.type));
        [ours, theirs] = [next, expected];
        steps += 1;
      }
    }
    expect(steps).toBe(2 * runs.flat().length);
  });
});
