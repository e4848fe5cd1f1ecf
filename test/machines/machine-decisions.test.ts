/** The machine's decision states alone: DECISION_NEEDED and DECISION, every transition, and what it refuses. */
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { announcedEffectOf, effectOfActions } from '../../machines/agent-loop.effects.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { AgentEvent, AgentStateName, Decision, ToolOutcome } from '../../machines/agent-loop.types.ts';
import { toolUseReply } from '../../src/model/scripted-model.ts';

type Snapshot = ReturnType<typeof initialTransition<typeof agentLoopMachine>>[0];

function step(snapshot: Snapshot, event: AgentEvent) {
  const [next, actions] = transition(agentLoopMachine, snapshot, event);
  const effect = effectOfActions(actions);
  expect(announcedEffectOf(next.value as AgentStateName, next.context)).toBe(effect);
  return { next, effect };
}

const ran = (id: string, name: string): ToolOutcome => ({ tool_use_id: id, name, kind: 'ran', content: `${name} ok`, is_error: false });
const decision = (id: string, verdict: Decision['verdict'], more: Partial<Decision> = {}): Decision => ({ tool_use_id: id, verdict, by: 'alice', at: 5, ...more });

/** A turn of [publish (needs approval), lookup, ask (needs an answer)], at checkpoint A. */
function openTurn(): Snapshot {
  const [s0] = initialTransition(agentLoopMachine, { task: 't', maxTurns: 3 });
  const reply = toolUseReply([
    { id: 'p', name: 'publish', input: { text: 'x' } },
    { id: 'l', name: 'lookup', input: { q: 'y' } },
    { id: 'q', name: 'ask_user', input: { question: 'which?' } },
  ]);
  return step(s0, { type: 'MODEL_REPLY', reply, needsDecision: { p: 'approval', q: 'answer' } }).next;
}

describe('decisions in the agent loop machine', () => {
  it('keeps the flags from MODEL_REPLY in checkpoint A, and nothing decided', () => {
    const a = openTurn();
    expect(a.value).toBe('pendingTool');
    expect(a.context.pending.map((c) => [c.id, c.needs ?? null])).toEqual([
      ['p', 'approval'],
      ['l', null],
      ['q', 'answer'],
    ]);
    expect(a.context.decisions).toEqual([]);
    expect(a.context.awaiting).toBeNull();
  });

  it('pendingTool -DECISION_NEEDED-> awaitingDecision for the next open call, recording since when', () => {
    const { next, effect } = step(openTurn(), { type: 'DECISION_NEEDED', tool_use_id: 'p', at: 1234 });
    expect(next.value).toBe('awaitingDecision');
    expect(effect).toBe('awaitDecision');
    expect(next.context.awaiting).toEqual({ tool_use_id: 'p', since: 1234 });
  });

  it('refuses DECISION_NEEDED for a call that is not next, not flagged, or already decided', () => {
    const a = openTurn();
    expect(transition(agentLoopMachine, a, { type: 'DECISION_NEEDED', tool_use_id: 'q', at: 1 })[0]).toBe(a);
    const afterP = step(step(step(a, { type: 'DECISION_NEEDED', tool_use_id: 'p', at: 1 }).next, { type: 'DECISION', decision: decision('p', 'approved') }).next, {
      type: 'TOOL_RESULT',
      outcome: ran('p', 'publish'),
    }).next;
    expect(transition(agentLoopMachine, afterP, { type: 'DECISION_NEEDED', tool_use_id: 'l', at: 1 })[0]).toBe(afterP);
    const approved = step(step(a, { type: 'DECISION_NEEDED', tool_use_id: 'p', at: 1 }).next, { type: 'DECISION', decision: decision('p', 'approved') }).next;
    expect(transition(agentLoopMachine, approved, { type: 'DECISION_NEEDED', tool_use_id: 'p', at: 2 })[0]).toBe(approved);
  });

  it('approved: records the decision (with edited input) and runs the call next, from effectRecorded', () => {
    const waiting = step(openTurn(), { type: 'DECISION_NEEDED', tool_use_id: 'p', at: 1 }).next;
    const edited = decision('p', 'approved', { input: { text: 'safer' }, note: 'ok' });
    const { next, effect } = step(waiting, { type: 'DECISION', decision: edited });
    expect(next.value).toBe('effectRecorded');
    expect(effect).toBe('runPendingTools');
    expect(next.context.decisions).toEqual([edited]);
    expect(next.context.awaiting).toBeNull();
    expect(next.context.results).toEqual([]);
    // The model's input stays in the call (and in messages); the edited one is the decision's.
    expect(next.context.pending[0]!.input).toEqual({ text: 'x' });
  });

  it('denied, not the last open call: the denial is the ledger entry, and the next call runs', () => {
    const waiting = step(openTurn(), { type: 'DECISION_NEEDED', tool_use_id: 'p', at: 1 }).next;
    const { next, effect } = step(waiting, { type: 'DECISION', decision: decision('p', 'denied', { reason: 'too risky' }) });
    expect(next.value).toBe('effectRecorded');
    expect(effect).toBe('runPendingTools');
    expect(next.context.results).toEqual([{ tool_use_id: 'p', name: 'publish', kind: 'denied', content: 'denied by a person: too risky', is_error: true }]);
  });

  it('answered, the last open call: the answer is the result, and the turn closes next', () => {
    let s = step(openTurn(), { type: 'DECISION_NEEDED', tool_use_id: 'p', at: 1 }).next;
    s = step(s, { type: 'DECISION', decision: decision('p', 'denied', { reason: 'no' }) }).next;
    s = step(s, { type: 'TOOL_RESULT', outcome: ran('l', 'lookup') }).next;
    const waiting = step(s, { type: 'DECISION_NEEDED', tool_use_id: 'q', at: 9 });
    expect(waiting.next.value).toBe('awaitingDecision');
    const { next, effect } = step(waiting.next, { type: 'DECISION', decision: decision('q', 'answered', { text: 'the second' }) });
    expect(next.value).toBe('effectRecorded');
    expect(effect).toBe('requestTurnClose');
    expect(next.context.results.at(-1)).toEqual({ tool_use_id: 'q', name: 'ask_user', kind: 'answered', content: 'the second', is_error: false });
    const closed = step(next, { type: 'CLOSE_TURN' }).next;
    expect(closed.value).toBe('closed');
    expect(closed.context.messages.at(-1)!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'p', content: 'denied by a person: no', is_error: true },
      { type: 'tool_result', tool_use_id: 'l', content: 'lookup ok' },
      { type: 'tool_result', tool_use_id: 'q', content: 'the second' },
    ]);
  });

  it('a denial by the deadline says so', () => {
    const waiting = step(openTurn(), { type: 'DECISION_NEEDED', tool_use_id: 'p', at: 1 }).next;
    const { next } = step(waiting, { type: 'DECISION', decision: decision('p', 'denied', { by: 'deadline', reason: 'no decision within 15m' }) });
    expect(next.context.results[0]!.content).toBe('denied by the decision deadline: no decision within 15m');
  });

  it('refuses a decision for another call, or whose verdict does not fit the call', () => {
    const waiting = step(openTurn(), { type: 'DECISION_NEEDED', tool_use_id: 'p', at: 1 }).next;
    for (const wrong of [decision('q', 'denied', { reason: 'x' }), decision('p', 'answered', { text: 'x' })]) {
      expect(transition(agentLoopMachine, waiting, { type: 'DECISION', decision: wrong })[0]).toBe(waiting);
    }
    // Nothing else moves a waiting run.
    expect(transition(agentLoopMachine, waiting, { type: 'TOOL_RESULT', outcome: ran('p', 'publish') })[0]).toBe(waiting);
    expect(transition(agentLoopMachine, waiting, { type: 'CLOSE_TURN' })[0]).toBe(waiting);
  });

  it('a new turn starts with no decisions', () => {
    let s = step(openTurn(), { type: 'DECISION_NEEDED', tool_use_id: 'p', at: 1 }).next;
    s = step(s, { type: 'DECISION', decision: decision('p', 'approved') }).next;
    s = step(s, { type: 'TOOL_RESULT', outcome: ran('p', 'publish') }).next;
    s = step(s, { type: 'TOOL_RESULT', outcome: ran('l', 'lookup') }).next;
    s = step(s, { type: 'DECISION_NEEDED', tool_use_id: 'q', at: 2 }).next;
    s = step(s, { type: 'DECISION', decision: decision('q', 'answered', { text: 'a' }) }).next;
    s = step(s, { type: 'CLOSE_TURN' }).next;
    const next = step(s, { type: 'MODEL_REPLY', reply: toolUseReply([{ id: 'z', name: 'lookup', input: {} }]) }).next;
    expect(next.context.decisions).toEqual([]);
    expect(next.context.pending[0]!.needs).toBeUndefined();
  });
});
