/**
 * The driver's machine step (src/runtime/machine-step.ts) reads the machine's transitions from a
 * table compiled off the machine (src/runtime/transition-table.ts). It must be xstate's
 * `transition()` exactly: on every step of every path of the crash suite, and for every event
 * of those paths tried in every snapshot they rest in (each guard both ways), the same state, the
 * same context (the same JSON, so the same record bytes), the same status, the same actions, and
 * the same snapshot object where xstate takes nothing.
 */
import { describe, expect, it } from 'vitest';
import { assign, createMachine, initialTransition, setup, type AnyMachineSnapshot, transition as xstateTransition } from 'xstate';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { effectOfActions } from '../../machines/agent-loop.effects.ts';
import type { AgentEvent } from '../../machines/agent-loop.types.ts';
import { ZERO_USAGE } from '../../machines/agent-loop.types.ts';
import { tableOf, transition } from '../../src/runtime/machine-step.ts';
import { TableUnfitError } from '../../src/runtime/transition-table.ts';
import { generateCrashPaths } from '../model-based/crash-paths.ts';

const actionsOf = (actions: readonly { type: string; params?: unknown }[]) => actions.map((action) => ({ type: action.type, params: action.params }));

/** What a step gives, as one text: the state, context (its JSON: the record's bytes), status, output, tags, nodes, whether it was taken, and the actions. */
function stepText(before: AnyMachineSnapshot, [after, actions]: readonly [AnyMachineSnapshot, readonly { type: string; params?: unknown }[]]): string {
  const nodes = after._nodes.map((node: { id: string }) => node.id);
  return JSON.stringify([after.value, after.context, after.status, after.output ?? null, [...after.tags], nodes, after === before ? 'not taken' : 'taken', actionsOf(actions)]);
}

/** Ours against xstate's, for one snapshot and event (compared as text, and shown field by field where they differ). */
function expectSameStep(snapshot: AnyMachineSnapshot, event: AgentEvent, where: string): AnyMachineSnapshot {
  const ours = transition(agentLoopMachine, snapshot as never, event);
  const theirs = xstateTransition(agentLoopMachine, snapshot as never, event);
  const [oursText, theirsText] = [stepText(snapshot, ours), stepText(snapshot, theirs)];
  if (oursText !== theirsText) expect(JSON.parse(oursText), where).toEqual(JSON.parse(theirsText));
  return ours[0];
}

/**
 * A snapshot as the guards can tell it apart: everything but what the messages say (their roles
 * and block types stay: a compaction cut reads them). Snapshots alike in this are tried once.
 */
function shapeOf(snapshot: AnyMachineSnapshot): string {
  const { messages, ...rest } = snapshot.context as { messages: { role: string; content: unknown }[] };
  const blocks = messages.map(({ role, content }) => `${role}:${Array.isArray(content) ? content.map((block: { type: string }) => block.type).join(',') : 'text'}`);
  return JSON.stringify([snapshot.value, snapshot.status, blocks, rest]);
}

describe('the machine step, from the transition table', () => {
  it('the agent loop compiles to a table: the driver never interprets it', () => {
    expect(tableOf(agentLoopMachine)).not.toBeInstanceOf(TableUnfitError);
  });

  it('matches xstate’s transition() on every step of every crash path', () => {
    const { paths } = generateCrashPaths();
    let steps = 0;
    for (const crashPath of paths) {
      const { maxTurns, maxPausesInARow } = crashPath.scenario;
      let [snapshot] = initialTransition(agentLoopMachine, { task: 'the task', maxTurns, maxPausesInARow });
      for (const step of crashPath.steps.slice(1)) {
        snapshot = expectSameStep(snapshot, step.event as unknown as AgentEvent, `path ${crashPath.id}`) as typeof snapshot;
        steps += 1;
      }
    }
    expect(steps).toBeGreaterThan(500);
  });

  it('matches it for every event of the crash paths tried in every snapshot they rest in: each guard taken and refused', () => {
    const { paths } = generateCrashPaths();
    const events = new Map<string, AgentEvent>();
    const snapshots = new Map<string, AnyMachineSnapshot>();
    for (const crashPath of paths) {
      const { maxTurns, maxPausesInARow } = crashPath.scenario;
      let [snapshot] = initialTransition(agentLoopMachine, { task: 'the task', maxTurns, maxPausesInARow });
      snapshots.set(shapeOf(snapshot), snapshot);
      for (const step of crashPath.steps.slice(1)) {
        const event = step.event as unknown as AgentEvent;
        events.set(JSON.stringify(event), event);
        [snapshot] = xstateTransition(agentLoopMachine, snapshot, event);
        snapshots.set(shapeOf(snapshot), snapshot);
      }
    }
    const outcomes = new Set<string>();
    let tried = 0;
    // An event type the state and the root have no handler for is tried once per state: it can only be refused.
    const handled = (state: string, type: string) => type in agentLoopMachine.root.on || type in agentLoopMachine.root.states[state]!.on;
    const triedUnhandled = new Set<string>();
    for (const snapshot of snapshots.values()) {
      for (const event of events.values()) {
        const state = String(snapshot.value);
        if (!handled(state, event.type)) {
          if (triedUnhandled.has(`${state} ${event.type}`)) continue;
          triedUnhandled.add(`${state} ${event.type}`);
        }
        const next = expectSameStep(snapshot, event, `${event.type} in ${String(snapshot.value)}`);
        outcomes.add(`${String(snapshot.value)} ${event.type} ${next === snapshot ? 'refused' : `→ ${String(next.value)}`}`);
        tried += 1;
      }
    }
    expect(tried).toBeGreaterThan(20_000);
    // Both ways where it matters: a tool's result taken and refused, a reply to each of its ends.
    for (const outcome of ['pendingTool TOOL_RESULT → effectRecorded', 'pendingTool TOOL_RESULT refused', 'closed MODEL_REPLY → done', 'closed MODEL_REPLY → pendingTool', 'effectRecorded CLOSE_TURN → closed', 'effectRecorded CLOSE_TURN refused']) {
      expect(outcomes, outcome).toContain(outcome);
    }
  });

  it('a reply’s MODEL_USAGE, with and without a cost budget, is xstate’s step on every usage step of every crash path', () => {
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
            const ours = expectSameStep(before, usage, `path ${crashPath.id}`);
            expect(ours).not.toBe(before);
            expect(effectOfActions(transition(agentLoopMachine, before, usage)[1])).toBeNull();
          }
          counted += 1;
        }
        snapshot = transition(agentLoopMachine, snapshot, event)[0];
      }
    }
    expect(counted).toBeGreaterThan(500);
  });

  it('MODEL_USAGE where the machine does not take it (a finished run) leaves the snapshot as it is, as xstate’s does', () => {
    const [snapshot] = initialTransition(agentLoopMachine, { task: 't', maxTurns: 1, maxPausesInARow: 1 });
    const done = agentLoopMachine.resolveState({ value: 'done', context: snapshot.context });
    const usage = { type: 'MODEL_USAGE', usage: ZERO_USAGE } as const;
    expect(transition(agentLoopMachine, done, usage)[0]).toBe(done);
    expect(xstateTransition(agentLoopMachine, done, usage)[0]).toBe(done);
  });

  it('an event the state does not take leaves the snapshot as it is, as xstate’s does', () => {
    const [snapshot] = initialTransition(agentLoopMachine, { task: 't', maxTurns: 1, maxPausesInARow: 1 });
    const event = { type: 'CLOSE_TURN' } as AgentEvent;
    expect(transition(agentLoopMachine, snapshot, event)[0]).toBe(snapshot);
    expect(xstateTransition(agentLoopMachine, snapshot, event)[0]).toBe(snapshot);
  });

  it('a machine built with what the table does not model gets no table, says why, and is stepped by xstate itself', () => {
    const nested = createMachine({ initial: 'a', states: { a: { initial: 'inner', states: { inner: { on: { GO: '#b' } } } }, b: { id: 'b' } } });
    const eventless = createMachine({ initial: 'a', states: { a: { always: 'b' }, b: {} } });
    const withExit = createMachine({ initial: 'a', states: { a: { exit: () => {}, on: { GO: 'b' } }, b: {} } });
    for (const [machine, reason] of [
      [nested, /only a root with atomic and final states/],
      [eventless, /eventless/],
      [withExit, /exit actions/],
    ] as const) {
      const table = tableOf(machine);
      expect(table).toBeInstanceOf(TableUnfitError);
      expect((table as TableUnfitError).message).toMatch(reason);
      const [start] = initialTransition(machine);
      expect(transition(machine, start, { type: 'GO' })[0].value).toEqual(xstateTransition(machine, start, { type: 'GO' })[0].value);
    }
  });

  it('a flat machine of its own, with object and function assigns, a self-transition and a reentry, steps as xstate does', () => {
    const machine = setup({
      types: { context: {} as { n: number; log: string[] }, events: {} as { type: 'ADD'; by: number } | { type: 'AGAIN' } | { type: 'STAY' } | { type: 'END' } },
      actions: {
        add: assign({ n: ({ context, event }) => context.n + (event.type === 'ADD' ? event.by : 0), log: ({ context }) => [...context.log, `n was ${context.n}`] }),
        note: assign(({ context }) => ({ log: [...context.log, 'noted'] })),
        announce: () => {},
      },
      guards: { small: ({ context }) => context.n < 3 },
    }).createMachine({
      context: { n: 0, log: [] },
      initial: 'counting',
      states: {
        counting: {
          entry: ['note', 'announce'],
          on: {
            ADD: [{ guard: 'small', actions: 'add' }, { target: 'full' }],
            AGAIN: { target: 'counting', reenter: true },
            STAY: { target: 'counting' },
          },
        },
        full: { on: { END: 'over' } },
        over: { type: 'final' },
      },
    });
    expect(tableOf(machine)).not.toBeInstanceOf(TableUnfitError);
    let [snapshot] = initialTransition(machine);
    for (const event of [{ type: 'ADD', by: 2 }, { type: 'AGAIN' }, { type: 'STAY' }, { type: 'ADD', by: 2 }, { type: 'ADD', by: 1 }, { type: 'STAY' }, { type: 'END' }] as const) {
      const [ours, ourActions] = transition(machine, snapshot, event);
      const [theirs, theirActions] = xstateTransition(machine, snapshot, event);
      expect([ours.value, ours.status, ours.context, ours === snapshot], event.type).toEqual([theirs.value, theirs.status, theirs.context, theirs === snapshot]);
      expect(actionsOf(ourActions)).toEqual(actionsOf(theirActions));
      snapshot = theirs;
    }
    expect(snapshot.status).toBe('done');
  });
});
