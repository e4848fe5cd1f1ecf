/**
 * The machine's structure, read from the machine itself and proved with its pure `transition()`
 * (what the runtime steps with): every live state takes CANCEL, a final one takes none; a final
 * state takes REOPEN with what it lacked, a live one with new settings, in place; every
 * state that asks the model takes BUDGET_REACHED and COMPACT; every state that makes a model call
 * takes MODEL_USAGE in place; and the lists of states kept
 * elsewhere (the xstate-free copies, a run's statuses, fork's resting points) agree with it.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { initialTransition, type SnapshotFrom, type StateValueFrom, transition } from 'xstate';
import { announcedEffectOf, EFFECT_ACTIONS, effectOfActions } from '../../machines/agent-loop.effects.ts';
import { type AgentLoopMachine, agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { AGENT_STATES, FINAL_STATES, LIVE_STATES, statesEnteredWith } from '../../machines/agent-loop.states.ts';
import * as types from '../../machines/agent-loop.types.ts';
import type { AgentEvent, AgentStateName, Message } from '../../machines/agent-loop.types.ts';
import { isRestingPoint } from '../../src/fork/fork-plan.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { transition as driverStep, withStatusOfState } from '../../src/runtime/machine-step.ts';
import type { RunStatusName } from '../../src/core/run-events.ts';
import type { JournalRecord } from '../../src/store/journal/journal-record.ts';

type Snapshot = SnapshotFrom<AgentLoopMachine>;

const CANCEL = { type: 'CANCEL', cancellation: { by: 'ops', reason: 'checked', at: 1_000 } } as const satisfies AgentEvent;

/**
 * A run that passes through every live state: a turn with a read-only call and one that needs
 * an approval, its close, a client compaction, and the end.
 */
const WALK: readonly AgentEvent[] = [
  {
    type: 'MODEL_REPLY',
    reply: toolUseReply([
      { id: 'a', name: 'lookup', input: { q: 'x' } },
      { id: 'b', name: 'publish', input: { text: 'y' } },
    ]),
    needsDecision: { b: 'approval' },
  },
  { type: 'TOOL_RESULT', outcome: { tool_use_id: 'a', name: 'lookup', kind: 'ran', content: 'found', is_error: false } },
  { type: 'DECISION_NEEDED', tool_use_id: 'b', at: 10 },
  { type: 'DECISION', decision: { tool_use_id: 'b', verdict: 'approved', by: 'ana', at: 20 } },
  { type: 'TOOL_RESULT', outcome: { tool_use_id: 'b', name: 'publish', kind: 'ran', content: 'published', is_error: false } },
  { type: 'CLOSE_TURN' },
  { type: 'COMPACT', estimatedTokens: 10, limit: 5, keepFrom: 1 },
  { type: 'COMPACTED', summary: { role: 'user', content: 'summary' }, replaced: 1 },
  { type: 'MODEL_REPLY', reply: endTurnReply('finished') },
];

/** Every snapshot the walk rests in, the first one included; each event must be taken. */
function walked(): Snapshot[] {
  let [snapshot] = initialTransition(agentLoopMachine, { task: 'the task', maxTurns: 3 });
  const snapshots = [snapshot];
  for (const event of WALK) {
    const [next] = transition(agentLoopMachine, snapshot, event);
    expect(next, `${event.type} in ${String(snapshot.value)}`).not.toBe(snapshot);
    snapshots.push((snapshot = next));
  }
  return snapshots;
}

const snapshots = walked();
const inState = (state: AgentStateName) => snapshots.filter((snapshot) => snapshot.value === state);
const stateNode = (state: AgentStateName) => agentLoopMachine.root.states[state]!;

/** The context without the fields a cancel sets, to see that it changes nothing else. */
function apartFromCancellation(snapshot: Snapshot) {
  const { cancellation: _cancellation, ...rest } = snapshot.context;
  return rest;
}

describe('the lists of states, read off the machine', () => {
  it('are the machine’s state nodes; AgentStateName is exactly the state values xstate infers from it', () => {
    expect(AGENT_STATES).toEqual(Object.keys(agentLoopMachine.root.states));
    expect([...LIVE_STATES, ...FINAL_STATES].sort()).toEqual([...AGENT_STATES].sort());
    expect(FINAL_STATES).toEqual(AGENT_STATES.filter((state) => stateNode(state).type === 'final'));
    expectTypeOf<AgentStateName>().toEqualTypeOf<StateValueFrom<AgentLoopMachine>>();
  });

  it('the xstate-free copies (for commands that start without the machine) hold the same states, in the same order', () => {
    expect(types.AGENT_STATES).toEqual(AGENT_STATES);
    expect(types.FINAL_STATES).toEqual(FINAL_STATES);
  });

  it('the states stopped at a limit are the final states a REOPEN leaves only with more of a limit (more turns, a budget)', () => {
    const LIMIT_GUARDS = ['givesMoreTurns', 'changesBudget'];
    const guardsOf = (state: AgentStateName) => [...stateNode(state).transitions.values()].flat().map((t) => ({ event: t.eventType, guard: t.guard }));
    const byLimit = FINAL_STATES.filter((state) => guardsOf(state).some(({ guard }) => LIMIT_GUARDS.includes(String(guard))));
    expect([...types.STOPPED_AT_LIMIT_STATES].sort()).toEqual(byLimit.sort());
    for (const state of types.STOPPED_AT_LIMIT_STATES) {
      expect(guardsOf(state), state).toEqual([expect.objectContaining({ event: 'REOPEN' })]);
      expect(types.isFinishedState(state), state).toBe(false);
    }
    expect(AGENT_STATES.filter(types.isFinishedState).sort()).toEqual(FINAL_STATES.filter((state) => !types.isStoppedAtLimit(state)).sort());
  });

  it('a run ends with a status for each final state of the machine, or waiting for a person', () => {
    // A record the compiler checks against RunStatusName: every member, and nothing else.
    const statuses = { done: true, stoppedAtMaxTurns: true, failed: true, waiting: true, cancelled: true, stoppedAtBudget: true } satisfies Record<RunStatusName, true>;
    expect(Object.keys(statuses).sort()).toEqual([...FINAL_STATES, 'waiting'].sort());
  });
});

describe('what each state takes, proved with transition()', () => {
  it('the walk rests in every live state of the machine at least once (the cases below are about these snapshots)', () => {
    for (const state of LIVE_STATES) expect(inState(state).length, `no snapshot of ${state}: give WALK a way through it`).toBeGreaterThan(0);
  });

  it('every live state takes CANCEL into cancelled, with who, why and when, and nothing else changed', () => {
    for (const state of LIVE_STATES) {
      for (const snapshot of inState(state)) {
        const [next, actions] = transition(agentLoopMachine, snapshot, CANCEL);
        expect(next.value, state).toBe('cancelled');
        expect(next.status, state).toBe('done');
        expect(next.context.cancellation, state).toEqual(CANCEL.cancellation);
        expect(apartFromCancellation(next), state).toEqual(apartFromCancellation(snapshot));
        expect(effectOfActions(actions), state).toBeNull();
      }
    }
  });

  it('a CANCEL that does not say who is refused in a live state: the same snapshot comes back', () => {
    for (const state of LIVE_STATES) {
      const [snapshot] = inState(state);
      const [next] = transition(agentLoopMachine, snapshot!, { type: 'CANCEL', cancellation: { by: ' ', reason: null, at: 1 } });
      expect(next, state).toBe(snapshot);
    }
  });

  it('a final state takes no CANCEL: transition() gives the same snapshot back, which the driver reads as "not taken"', () => {
    const context = snapshots[0]!.context;
    for (const state of FINAL_STATES) {
      const snapshot = agentLoopMachine.resolveState({ value: state, context });
      expect(snapshot.status, state).toBe('done');
      const [next, actions] = transition(agentLoopMachine, snapshot, CANCEL);
      expect(next, state).toBe(snapshot);
      expect(actions, state).toEqual([]);
      expect(driverStep(agentLoopMachine, snapshot, CANCEL)[0], `${state}, the driver's step`).toBe(snapshot);
    }
    const [done] = inState('done');
    expect(transition(agentLoopMachine, done!, CANCEL)[0]).toBe(done);
  });

  it('every state whose entry asks the model takes BUDGET_REACHED (a budget reached) and COMPACT (over the trigger, with a place to cut)', () => {
    const asking = statesEnteredWith('requestModelReply');
    expect(asking.length).toBeGreaterThan(0);
    for (const state of asking) {
      const cuttable = inState(state).filter((snapshot) => cutOf(snapshot.context.messages) > 0);
      expect(cuttable.length, `no snapshot of ${state} with an assistant message to cut before`).toBeGreaterThan(0);
      for (const snapshot of inState(state)) {
        const spent = agentLoopMachine.resolveState({ value: state, context: { ...snapshot.context, budget: { maxTotalTokens: 1 }, usage: { input: 1, output: 0, cacheRead: 0, cacheWrite: 0 } } });
        const [stopped] = transition(agentLoopMachine, spent, { type: 'BUDGET_REACHED' });
        expect(stopped.value, state).toBe('stoppedAtBudget');
        expect(stopped.context.budgetStop, state).toEqual({ budget: 'tokens', spent: 1, limit: 1 });
      }
      for (const snapshot of cuttable) {
        const [compacting, actions] = transition(agentLoopMachine, snapshot, { type: 'COMPACT', estimatedTokens: 10, limit: 5, keepFrom: cutOf(snapshot.context.messages) });
        expect(compacting.value, state).toBe('compacting');
        expect(effectOfActions(actions), state).toBe('requestCompaction');
      }
    }
  });
});

describe('a process taking the run up (REOPEN), proved with transition()', () => {
  const context = snapshots.at(-1)!.context;
  const at = (state: AgentStateName, changes: Partial<Snapshot['context']> = {}) => agentLoopMachine.resolveState({ value: state, context: { ...context, ...changes } });
  const reopen = (maxTurns: number, more: Partial<Extract<AgentEvent, { type: 'REOPEN' }>> = {}) => ({ type: 'REOPEN' as const, maxTurns, ...more });
  const BUDGET = { budget: { maxTotalTokens: 10_000 } };

  it('each final state but cancelled takes REOPEN with what it lacked, into awaitingModel, announcing the model call', () => {
    const turn = context.turn;
    const cases: Array<[AgentStateName, Partial<Snapshot['context']>, ReturnType<typeof reopen>]> = [
      ['done', { finalText: 'finished' }, reopen(turn + 1, { message: 'and then?' })],
      ['stoppedAtMaxTurns', { maxTurns: turn }, reopen(turn + 2)],
      ['failed', { failure: { reason: 'invalid_reply', message: 'bad', retryable: true }, pausesInARow: 2 }, reopen(context.maxTurns)],
      ['stoppedAtBudget', { budget: { maxTotalTokens: 1 }, budgetStop: { budget: 'tokens', spent: 5, limit: 1 } }, reopen(context.maxTurns, { budget: BUDGET })],
    ];
    expect(cases.map(([state]) => state).sort()).toEqual(FINAL_STATES.filter((state) => state !== 'cancelled').sort());
    for (const [state, changes, event] of cases) {
      const [next, actions] = transition(agentLoopMachine, at(state, changes), event);
      expect(next.value, state).toBe('awaitingModel');
      // xstate keeps the status a final state gave (an actor would have taken no event); the runtime reads it again.
      expect(next.status, state).toBe('done');
      expect(withStatusOfState(agentLoopMachine, next).status, state).toBe('active');
      expect(effectOfActions(actions), state).toBe('requestModelReply');
      expect(next.context.maxTurns, state).toBe(event.maxTurns);
      expect(next.context.failure, state).toBeNull();
      expect(next.context.pausesInARow, state).toBe(0);
    }
    const [continued] = transition(agentLoopMachine, at('done', { finalText: 'finished' }), reopen(turn + 1, { message: 'and then?' }));
    expect(continued.context.messages).toEqual([...context.messages, { role: 'user', content: 'and then?' }]);
    expect(continued.context.finalText).toBeNull();
    const [raised] = transition(agentLoopMachine, at('stoppedAtBudget', { budget: { maxTotalTokens: 1 }, budgetStop: { budget: 'tokens', spent: 5, limit: 1 } }), reopen(context.maxTurns, { budget: BUDGET }));
    expect(raised.context.budget).toEqual(BUDGET.budget);
    expect(raised.context.budgetStop).toBeNull();
  });

  it('a final state refuses a REOPEN that does not bring what it lacked: the same snapshot comes back', () => {
    const turn = context.turn;
    const refused: Array<[AgentStateName, Partial<Snapshot['context']>, ReturnType<typeof reopen>]> = [
      ['done', {}, reopen(turn + 5)],
      ['done', {}, reopen(turn, { message: 'no turns left for it' })],
      ['done', {}, reopen(turn + 1, { message: '   ' })],
      ['stoppedAtMaxTurns', { maxTurns: turn }, reopen(turn)],
      ['stoppedAtMaxTurns', { maxTurns: turn }, reopen(turn + 1, { message: 'not a finished conversation' })],
      ['failed', { failure: { reason: 'max_tokens', message: 'cut off', retryable: false } }, reopen(turn + 5)],
      ['stoppedAtBudget', { budgetStop: { budget: 'tokens', spent: 5, limit: 1 } }, reopen(turn + 5)],
      ['cancelled', { cancellation: CANCEL.cancellation }, reopen(turn + 5, { budget: BUDGET })],
    ];
    for (const [state, changes, event] of refused) {
      const snapshot = at(state, changes);
      expect(transition(agentLoopMachine, snapshot, event)[0], `${state} ${JSON.stringify(event)}`).toBe(snapshot);
    }
  });

  it('every live state takes REOPEN with a new turn limit or budget in place: the settings changed, nothing else, no effect announced', () => {
    for (const state of LIVE_STATES) {
      for (const snapshot of inState(state)) {
        const [next, actions] = transition(agentLoopMachine, snapshot, reopen(snapshot.context.maxTurns + 4, { budget: BUDGET }));
        expect(next.value, state).toBe(state);
        expect(effectOfActions(actions), state).toBeNull();
        const { maxTurns, budget, budgetStop, ...rest } = next.context;
        expect([maxTurns, budget, budgetStop], state).toEqual([snapshot.context.maxTurns + 4, BUDGET.budget, snapshot.context.budgetStop]);
        const { maxTurns: _m, budget: _b, budgetStop: _s, ...restBefore } = snapshot.context;
        expect(rest, state).toEqual(restBefore);
      }
    }
  });

  it('a live state refuses a REOPEN that changes nothing, or brings a message: the same snapshot comes back', () => {
    for (const state of LIVE_STATES) {
      const [snapshot] = inState(state);
      const { maxTurns } = snapshot!.context;
      expect(transition(agentLoopMachine, snapshot!, reopen(maxTurns))[0], state).toBe(snapshot);
      expect(transition(agentLoopMachine, snapshot!, reopen(maxTurns + 1, { message: 'not finished yet' }))[0], state).toBe(snapshot);
    }
  });
});

describe('a reply’s tokens (MODEL_USAGE), proved with transition()', () => {
  const USAGE = { input: 7, output: 3, cacheRead: 2, cacheWrite: 1 } as const;
  const callingStates = [...statesEnteredWith('requestModelReply'), ...statesEnteredWith('requestCompaction')];

  it('every state that makes a model call takes MODEL_USAGE in place: the tokens added, nothing else changed, no effect announced', () => {
    expect(callingStates.length).toBeGreaterThan(2);
    for (const state of callingStates) {
      for (const snapshot of inState(state)) {
        const [next, actions] = transition(agentLoopMachine, snapshot, { type: 'MODEL_USAGE', usage: USAGE, costUsd: 0.5 });
        expect(next.value, state).toBe(state);
        expect(next.status, state).toBe('active');
        expect(effectOfActions(actions), state).toBeNull();
        const { usage, ...rest } = next.context;
        const { usage: before, ...restBefore } = snapshot.context;
        expect(usage, state).toEqual({ input: before.input + 7, output: before.output + 3, cacheRead: before.cacheRead + 2, cacheWrite: before.cacheWrite + 1 });
        // No cost budget: a cost given is not kept.
        expect(rest, state).toEqual(restBefore);
      }
    }
  });

  it('with a cost budget, MODEL_USAGE adds the reply’s cost; a token budget keeps no cost', () => {
    for (const state of callingStates) {
      const [snapshot] = inState(state);
      const costed = agentLoopMachine.resolveState({ value: state, context: { ...snapshot!.context, budget: { maxCostUsd: 2 }, costUsd: 0.25 } });
      expect(transition(agentLoopMachine, costed, { type: 'MODEL_USAGE', usage: USAGE, costUsd: 0.5 })[0].context.costUsd, state).toBe(0.75);
      const tokens = agentLoopMachine.resolveState({ value: state, context: { ...snapshot!.context, budget: { maxTotalTokens: 100 } } });
      expect(transition(agentLoopMachine, tokens, { type: 'MODEL_USAGE', usage: USAGE, costUsd: 0.5 })[0].context, state).not.toHaveProperty('costUsd');
    }
  });

  it('a state that makes no model call takes no MODEL_USAGE: the same snapshot comes back', () => {
    for (const state of AGENT_STATES.filter((name) => !callingStates.includes(name))) {
      const snapshot = inState(state)[0] ?? agentLoopMachine.resolveState({ value: state, context: snapshots[0]!.context });
      expect(transition(agentLoopMachine, snapshot, { type: 'MODEL_USAGE', usage: USAGE })[0], state).toBe(snapshot);
    }
  });
});

describe('what the runtime reads without the machine agrees with it', () => {
  it('the effect a resting snapshot announces (a resume, a fork read it) is the effect its state’s entry announces', () => {
    for (const snapshot of snapshots) {
      const state = snapshot.value as AgentStateName;
      const entered = stateNode(state).entry.map((action) => (typeof action === 'string' ? action : (action as { type: string }).type));
      const effect = entered.find((name) => (EFFECT_ACTIONS as readonly string[]).includes(name));
      if (effect) expect(announcedEffectOf(state, snapshot.context), state).toBe(effect);
    }
  });

  it('fork goes on by default from the states that ask the model for a reply, and from the final ones but cancelled', () => {
    const resting = new Set([...statesEnteredWith('requestModelReply'), ...FINAL_STATES.filter((state) => state !== 'cancelled')]);
    const context = { ...snapshots[0]!.context };
    for (const state of AGENT_STATES) {
      const record = { seq: 1, at: 0, event: 'MODEL_REPLY', state } as JournalRecord;
      expect(isRestingPoint(record, context), state).toBe(resting.has(state));
    }
  });
});

/** An assistant message past the first one, where a compaction may cut; 0: none. */
function cutOf(messages: readonly Message[]): number {
  return Math.max(0, messages.findIndex((message, index) => index > 0 && message.role === 'assistant'));
}
