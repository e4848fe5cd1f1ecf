/** The agent loop machine alone: pure transitions, the effects they announce, resting states only. */
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { announcedEffectOf, effectOfActions } from '../../machines/agent-loop.effects.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { AgentEvent, AgentStateName, ToolOutcome } from '../../machines/agent-loop.types.ts';
import { endTurnReply, stopReply, toolUseReply } from '../../src/model/scripted-model.ts';

const outcome = (id: string, name: string, content = `${name} ok`): ToolOutcome => ({ tool_use_id: id, name, kind: 'ran', content, is_error: false });

function start(maxTurns = 5) {
  return initialTransition(agentLoopMachine, { task: 'the task', maxTurns });
}

function step(snapshot: ReturnType<typeof start>[0], event: AgentEvent) {
  const [next, actions] = transition(agentLoopMachine, snapshot, event);
  const effect = effectOfActions(actions);
  // A resumed run knows only the snapshot: it must announce the same effect as the live transition did.
  expect(announcedEffectOf(next.value as AgentStateName, next.context)).toBe(effect);
  return { next, effect };
}

describe('the agent loop machine', () => {
  it('starts awaiting the model with the task as the first user message', () => {
    const [snapshot, actions] = start();
    expect(snapshot.value).toBe('awaitingModel');
    expect(effectOfActions(actions)).toBe('requestModelReply');
    expect(snapshot.context.messages).toEqual([{ role: 'user', content: 'the task' }]);
  });

  it('walks a parallel turn: A, one effect per call, B, and back to the model', () => {
    const [s0] = start();
    const reply = toolUseReply([
      { id: 'a', name: 'read', input: { x: 1 } },
      { id: 'b', name: 'write', input: { y: 2 } },
    ]);
    const a = step(s0, { type: 'MODEL_REPLY', reply });
    expect(a.next.value).toBe('pendingTool');
    expect(a.effect).toBe('runPendingTools');
    expect(a.next.context.turn).toBe(1);
    expect(a.next.context.pending.map((c) => c.id)).toEqual(['a', 'b']);

    // Results may arrive in any order; the closing message follows the model's order.
    const first = step(a.next, { type: 'TOOL_RESULT', outcome: outcome('b', 'write') });
    expect(first.next.value).toBe('effectRecorded');
    expect(first.effect).toBe('runPendingTools');
    const second = step(first.next, { type: 'TOOL_RESULT', outcome: outcome('a', 'read') });
    expect(second.effect).toBe('requestTurnClose');

    const b = step(second.next, { type: 'CLOSE_TURN' });
    expect(b.next.value).toBe('closed');
    expect(b.effect).toBe('requestModelReply');
    expect(b.next.context.pending).toEqual([]);
    expect(b.next.context.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'a', content: 'read ok' },
        { type: 'tool_result', tool_use_id: 'b', content: 'write ok' },
      ],
    });

    const done = step(b.next, { type: 'MODEL_REPLY', reply: endTurnReply('finished') });
    expect(done.next.value).toBe('done');
    expect(done.next.status).toBe('done');
    expect(done.next.context.finalText).toBe('finished');
  });

  it('ignores a result for a call that is not open, and a close before every call is recorded', () => {
    const [s0] = start();
    const { next: a } = step(s0, { type: 'MODEL_REPLY', reply: toolUseReply([{ id: 'a', name: 'x', input: {} }, { id: 'b', name: 'y', input: {} }]) });
    expect(transition(agentLoopMachine, a, { type: 'TOOL_RESULT', outcome: outcome('zzz', 'x') })[0]).toBe(a);
    const { next: one } = step(a, { type: 'TOOL_RESULT', outcome: outcome('a', 'x') });
    expect(transition(agentLoopMachine, one, { type: 'TOOL_RESULT', outcome: outcome('a', 'x') })[0]).toBe(one);
    expect(transition(agentLoopMachine, one, { type: 'CLOSE_TURN' })[0]).toBe(one);
  });

  it('stops at MAX_TURNS holding the reply it did not act on', () => {
    const [s0] = start(1);
    const { next: a } = step(s0, { type: 'MODEL_REPLY', reply: toolUseReply([{ id: 'a', name: 'x', input: {} }]) });
    const { next: r } = step(a, { type: 'TOOL_RESULT', outcome: outcome('a', 'x') });
    const { next: b } = step(r, { type: 'CLOSE_TURN' });
    const reply = toolUseReply([{ id: 'b', name: 'x', input: {} }]);
    const { next: stopped, effect } = step(b, { type: 'MODEL_REPLY', reply });
    expect(stopped.value).toBe('stoppedAtMaxTurns');
    expect(effect).toBeNull();
    expect(stopped.context.heldReply).toBe(reply);
    expect(stopped.context.messages).toHaveLength(3);
  });

  it('fails clearly on stop reasons it must not act on', () => {
    for (const [reason, failure] of [
      ['max_tokens', 'max_tokens'],
      ['refusal', 'refusal'],
      ['model_context_window_exceeded', 'context_window_exceeded'],
      ['something_new', 'unknown_stop_reason'],
    ] as const) {
      const [s0] = start();
      const { next } = step(s0, { type: 'MODEL_REPLY', reply: stopReply(reason) });
      expect(next.value).toBe('failed');
      expect(next.context.failure?.reason).toBe(failure);
      expect(next.context.messages).toHaveLength(1);
    }
  });

  it('continues after pause_turn with the paused content in messages', () => {
    const [s0] = start();
    const { next, effect } = step(s0, { type: 'MODEL_REPLY', reply: stopReply('pause_turn', 'partial') });
    expect(next.value).toBe('awaitingModel');
    expect(effect).toBe('requestModelReply');
    expect(next.context.messages).toHaveLength(2);
  });

  it('keeps its context plain JSON, so every snapshot can be persisted', () => {
    const [s0] = start();
    const { next } = step(s0, { type: 'MODEL_REPLY', reply: toolUseReply([{ id: 'a', name: 'x', input: { deep: [1, { two: 2 }] } }]) });
    expect(JSON.parse(JSON.stringify(next.context))).toEqual(next.context);
  });

  it('has no invoked actors and no eventless transitions: every state is a resting state', () => {
    for (const node of Object.values(agentLoopMachine.root.states)) {
      expect(node.invoke, node.key).toEqual([]);
      expect(node.always ?? [], node.key).toEqual([]);
    }
    expect(Object.keys(agentLoopMachine.root.states)).toEqual([
      'awaitingModel',
      'compacting',
      'pendingTool',
      'effectRecorded',
      'awaitingDecision',
      'closed',
      'done',
      'stoppedAtMaxTurns',
      'failed',
      'cancelled',
      'stoppedAtBudget',
    ]);
  });

  it('describes every state and every transition (the root’s CANCEL too), for Stately and the visualizer', () => {
    const states = Object.values(agentLoopMachine.root.states);
    for (const node of states) expect(node.description, node.key).toBeTruthy();
    for (const node of [agentLoopMachine.root, ...states]) {
      for (const transition of [...node.transitions.values()].flat()) {
        expect(transition.description, `${node.key} -${transition.eventType}-> ${transition.target?.map((t) => t.key)}`).toBeTruthy();
      }
    }
  });

  it('answers a model reply the same way in both states that ask the model (one shared list)', () => {
    const reading = (state: 'awaitingModel' | 'closed') =>
      [...agentLoopMachine.root.states[state]!.transitions.entries()].map(([event, list]) => [
        event,
        list.map((t) => ({ target: t.target?.map((n) => n.key), guard: t.guard, actions: t.actions, reenter: t.reenter, description: t.description })),
      ]);
    expect(reading('closed')).toEqual(reading('awaitingModel'));
  });

  it(`fails with pause_limit on the pause_turn past MAX_PAUSES_IN_A_ROW in a row; any other reply starts the count again`, () => {
    let [snapshot] = initialTransition(agentLoopMachine, { task: 't', maxTurns: 5, maxPausesInARow: 2 });
    const pause = { type: 'MODEL_REPLY', reply: stopReply('pause_turn', 'partial') } as const;
    for (const expected of [1, 2]) {
      snapshot = step(snapshot, pause).next;
      expect(snapshot.context.pausesInARow).toBe(expected);
    }
    snapshot = step(snapshot, { type: 'MODEL_REPLY', reply: toolUseReply([{ id: 'a', name: 'x', input: {} }]) }).next;
    expect(snapshot.context.pausesInARow).toBe(0);
    snapshot = step(snapshot, { type: 'TOOL_RESULT', outcome: outcome('a', 'x') }).next;
    snapshot = step(snapshot, { type: 'CLOSE_TURN' }).next;
    for (const _ of [1, 2]) snapshot = step(snapshot, pause).next;
    const { next, effect } = step(snapshot, pause);
    expect(next.value).toBe('failed');
    expect(effect).toBeNull();
    expect(next.context.failure).toMatchObject({ reason: 'pause_limit', retryable: true });
    expect(next.context.messages.filter((m) => m.role === 'assistant')).toHaveLength(6);
  });
});

describe('budgets in the machine', () => {
  const budgeted = (budget: { maxCostUsd?: number; maxTotalTokens?: number }, costUsd?: number) =>
    initialTransition(agentLoopMachine, { task: 'the task', maxTurns: 5, budget, ...(costUsd !== undefined ? { costUsd } : {}) })[0];

  it('takes BUDGET_REACHED only when a budget is reached: a run under its budget, or without one, ignores it', () => {
    for (const snapshot of [start()[0], budgeted({ maxTotalTokens: 10_000 }), budgeted({ maxCostUsd: 1 })]) {
      const [next] = transition(agentLoopMachine, snapshot, { type: 'BUDGET_REACHED' });
      expect(next).toBe(snapshot);
    }
  });

  it('stops in stoppedAtBudget, from closed after the turn’s tools, with which budget and the figures; nothing more is announced', () => {
    const [s0] = [budgeted({ maxTotalTokens: 150, maxCostUsd: 5 })];
    expect(s0.context).toMatchObject({ budget: { maxTotalTokens: 150, maxCostUsd: 5 }, costUsd: 0 });
    const a = step(s0, { type: 'MODEL_REPLY', reply: { ...toolUseReply([{ id: 'a', name: 'read', input: {} }]), usage: { input: 100, output: 60, cacheRead: 0, cacheWrite: 0 } } });
    const e = step(a.next, { type: 'TOOL_RESULT', outcome: outcome('a', 'read') });
    const b = step(e.next, { type: 'CLOSE_TURN' });
    expect(b.next.value).toBe('closed');
    const stop = step(b.next, { type: 'BUDGET_REACHED' });
    expect(stop.next.value).toBe('stoppedAtBudget');
    expect(stop.next.status).toBe('done');
    expect(stop.effect).toBeNull();
    expect(stop.next.context.budgetStop).toEqual({ budget: 'tokens', spent: 160, limit: 150 });
    expect(stop.next.context.messages).toEqual(b.next.context.messages);
  });

  it('a cost budget is reached on the cost the runtime counted (costUsd), in awaitingModel too', () => {
    const snapshot = agentLoopMachine.resolveState({ value: 'awaitingModel', context: { ...budgeted({ maxCostUsd: 0.5 }, 0).context, costUsd: 0.5 } });
    const stop = step(snapshot, { type: 'BUDGET_REACHED' });
    expect(stop.next.value).toBe('stoppedAtBudget');
    expect(stop.next.context.budgetStop).toEqual({ budget: 'cost', spent: 0.5, limit: 0.5 });
  });

  it("a tenant's quota, as the runtime read it, stops a run without a budget of its own; a REOPEN with the budget it has lifts the stop", () => {
    const quota = { budget: 'cost' as const, spent: 200.01, limit: 200, tenant: 'acme', month: '2026-12' };
    // Not a whole quota stop (spent under the limit, no month): ignored like a budget not reached.
    for (const tenantQuota of [{ ...quota, spent: 199 }, { budget: 'cost' as const, spent: 201, limit: 200, tenant: 'acme' }]) {
      const [s0] = start();
      expect(transition(agentLoopMachine, s0, { type: 'BUDGET_REACHED', tenantQuota })[0]).toBe(s0);
    }
    const stop = step(start()[0], { type: 'BUDGET_REACHED', tenantQuota: quota });
    expect(stop.next.value).toBe('stoppedAtBudget');
    expect(stop.effect).toBeNull();
    expect(stop.next.context.budgetStop).toEqual(quota);
    // Without a budget change, a REOPEN does not take it; with the run's own budget (none), it is lifted and the model is asked.
    expect(transition(agentLoopMachine, stop.next, { type: 'REOPEN', maxTurns: 5 })[0].value).toBe('stoppedAtBudget');
    const reopened = step(stop.next, { type: 'REOPEN', maxTurns: 5, budget: { budget: null, costUsd: undefined } });
    expect(reopened.next.value).toBe('awaitingModel');
    expect(reopened.next.context.budgetStop).toBeNull();
    expect(reopened.effect).toBe('requestModelReply');
  });
});
