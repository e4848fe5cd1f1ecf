/**
 * The kinds of await a run stops in (awaitingDecision), one entry of AWAIT_KINDS each: the reply
 * that makes the run wait, the decision the machine takes about each call, and what the world
 * outside the run does meanwhile, as a user would: a person decides in the run's inbox
 * (decide), a sender signals the event (sendSignal), or the clock passes the deadline. The crash
 * suite of awaits (await-paths.test.ts, and pg-await-paths.test.ts on PostgreSQL) walks each
 * kind's one path through the machine and kills the run at every crash point of it.
 *
 * A new kind of await is one more entry here: its calls, its verdict, and its `give`. A kind a
 * fleet only has (a sub-agent call waiting for its child run: fleet/child-await-kinds.ts) is an
 * entry of its own table with a `fleet` part, and its giver (`child`) is one more entry of GIVERS.
 */
import { awaitsDecision, openCalls } from '../../../machines/agent-loop.logic.ts';
import type { Decision, DecisionNeed, Verdict } from '../../../machines/agent-loop.types.ts';
import { decide } from '../../../src/awaits/decide.ts';
import { sendSignal } from '../../../src/awaits/send-signal.ts';
import { waitPlanOf } from '../../../src/awaits/wait-tool.ts';
import type { WaitingCall } from '../../../src/core/run-events.ts';
import { toolUseReply } from '../../../src/model/scripted-model.ts';
import type { Signal, SignalDelivery } from '../../../src/store/inbox/signal-inbox.ts';
import type { RunStore } from '../../../src/store/store.ts';
import type { ChildOutcome, ChildRuns } from '../../../src/tools/calling-run.ts';
import type { ToolDefinition } from '../../../src/tools/tool.ts';
import type { World } from '../scenario-runner.ts';
import { endTurnEvent, type PathEvent, type Snapshot, toolResultEvent } from './path-event.ts';

export interface AwaitCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
  needs: DecisionNeed;
}

/** What the world gave a waiting call, in order: the checker holds the journal to it. */
export type Given =
  | { call: string; by: 'person'; decision: Decision }
  /** `again`: what sending the same signal (same id) once more delivered: it must not be a second signal. */
  | { call: string; by: 'signal'; signal: Signal; again: SignalDelivery }
  | { call: string; by: 'clock'; wakeAt: number }
  /** A child run driven to its end from outside: `delivered`, the decision its worker wrote to the caller's inbox (null: the delivery was lost). */
  | { call: string; by: 'child'; childRunId: string; end: ChildOutcome; delivered: Decision | null };

/**
 * Each giver's rules, for the checker: whether a recorded decision is one it ended, and how it
 * differs from what it gave (null: the same).
 */
export const GIVERS: { [by in Given['by']]: { ended(decision: Decision): boolean; differs(decision: Decision, given: Extract<Given, { by: by }>): string | null } } = {
  person: {
    ended: (decision) => decision.by !== 'clock' && decision.signal === undefined && decision.child === undefined,
    differs: (decision, { decision: gave }) => {
      const fields = (d: Decision) => JSON.stringify({ tool_use_id: d.tool_use_id, verdict: d.verdict, by: d.by, at: d.at, reason: d.reason, text: d.text });
      return fields(decision) === fields(gave) ? null : `recorded ${fields(decision)}, the person gave ${fields(gave)}`;
    },
  },
  signal: {
    ended: (decision) => decision.signal !== undefined,
    differs: (decision, { signal }) => (decision.signal?.id === signal.id ? null : `ended by signal ${decision.signal?.id ?? 'none'}, not by ${signal.id}, the one sent while it waited`),
  },
  clock: {
    ended: (decision) => decision.by === 'clock',
    // When: deadlineKept holds the clock's decision to the journal's deadline.
    differs: () => null,
  },
  child: {
    ended: (decision) => decision.child !== undefined && decision.by === `sub-agent run ${decision.child.runId}`,
    // The child's end as delivered (all of it), or as the run read it from the child (its time aside).
    differs: (decision, { childRunId, end, delivered }) => {
      const fields = (d: Partial<Decision>) => JSON.stringify({ tool_use_id: d.tool_use_id, verdict: d.verdict, by: d.by, text: d.text, child: d.child, ...(delivered ? { at: d.at } : {}) });
      const expected = delivered ?? { tool_use_id: decision.tool_use_id, verdict: 'answered', by: `sub-agent run ${childRunId}`, text: end.text ?? undefined, child: { runId: childRunId, state: end.state } };
      return fields(decision) === fields(expected) ? null : `recorded ${fields(decision)}, the child's end ${delivered ? 'delivered' : 'read from the child'} is ${fields(expected)}`;
    },
  },
};

/** What `give` acts with: the run's store, opened for this act alone (as another process opens it). */
export interface Outside {
  store: RunStore;
  /** The run's key (its id on PostgreSQL), and the world its tools act on (a child run's tools act on it too). */
  key: string;
  world: World;
  gave(given: Given): void;
}

export interface AwaitKind {
  /** How the tests name it. */
  name: string;
  /** The calls of the reply that makes the run wait, in order; each waits for what `give` brings. */
  calls: AwaitCall[];
  /** The verdict each call's decision has, as the machine takes it. */
  verdict: Verdict;
  /** Who ends each wait: the checker holds the DECISION record to it. */
  endedBy: Given['by'];
  /**
   * True: each process waits in itself for what ends the wait (the clock), and the world does
   * nothing; false: a process with nothing at hand stops (status 'waiting') and `give` acts
   * before the next one.
   */
  waitsInProcess: boolean;
  /** What the world does about a call the run stopped waiting for. */
  give(outside: Outside, call: WaitingCall): Promise<void>;
  /** A fleet's part of the kind (a sub-agent call's child queue): absent for a kind any store has. */
  fleet?: AwaitFleet | undefined;
}

/** What a kind whose calls queue child runs adds to each process of the run, and what the checker reads of the queue. */
export interface AwaitFleet {
  /** The tools a process of the run is given besides the scenario's, and the queue its children go to. */
  partsOf(runId: string, world: World): { tools: ToolDefinition[]; childRuns: ChildRuns };
  /** The ids of the child runs the run queued, in order. */
  queued(runId: string): Promise<string[]>;
  /** The side effects of the child's own calls (by tool_use_id): each must take place once. */
  childEffects: string[];
  /** Whether the child's end comes through the run's inbox (delivered by the child's worker) or is read from the child. */
  delivered: boolean;
}

/** Who decides as a person; a decision by anyone else is not one the world gave. */
export const PERSON = 'a-person';
export const SENDER = 'a-sender';
export const EVENT = 'deploy';

const person = (verdict: Verdict, more: { reason?: string; text?: string }) => async (outside: Outside, call: WaitingCall) => {
  outside.gave({ call: call.tool_use_id, by: 'person', decision: await decide(outside.store, { tool_use_id: call.tool_use_id, verdict, by: PERSON, ...more }) });
};

/** The signal for a call's wait: one id per call, sent twice (idempotent delivery: the second delivers nothing). */
async function signal(outside: Outside, call: WaitingCall): Promise<void> {
  const input = { name: EVENT, id: `for-${call.tool_use_id}`, by: SENDER, data: { call: call.tool_use_id } };
  const sent = await sendSignal(outside.store, input);
  const again = await sendSignal(outside.store, input);
  outside.gave({ call: call.tool_use_id, by: 'signal', signal: sent.signal, again: again.delivery });
}

/** The clock: the world waits until the wait's deadline (the journal's `since` plus the input's time) has passed. */
async function clock(outside: Outside, call: WaitingCall): Promise<void> {
  const wakeAt = waitPlanOf(call.input, call.since!)!.wakeAt!;
  // Past the deadline by the clock the run reads: no timed verdict, only an order of events.
  while (Date.now() <= wakeAt) await new Promise((resolve) => setTimeout(resolve, Math.max(1, wakeAt - Date.now() + 1)));
  outside.gave({ call: call.tool_use_id, by: 'clock', wakeAt });
}

const nothing = async () => {};

export const AWAIT_KINDS: readonly AwaitKind[] = [
  {
    name: 'approval, approved',
    calls: [{ id: 't1_publish', name: 'publish', input: { text: 'news' }, needs: 'approval' }],
    verdict: 'approved',
    endedBy: 'person',
    waitsInProcess: false,
    give: person('approved', {}),
  },
  {
    name: 'approval, denied',
    calls: [{ id: 't1_publish', name: 'publish', input: { text: 'news' }, needs: 'approval' }],
    verdict: 'denied',
    endedBy: 'person',
    waitsInProcess: false,
    give: person('denied', { reason: 'not now' }),
  },
  {
    name: 'answer (ask_user answered)',
    calls: [{ id: 't1_ask', name: 'ask_user', input: { question: 'Which one?' }, needs: 'answer' }],
    verdict: 'answered',
    endedBy: 'person',
    waitsInProcess: false,
    give: person('answered', { text: 'the second' }),
  },
  {
    // Each process stops at once; the world lets the deadline pass before the next: a resume after it.
    name: 'timed wait, resumed after its deadline',
    calls: [{ id: 't1_wait', name: 'wait', input: { seconds: 0.05 }, needs: 'wait' }],
    verdict: 'answered',
    endedBy: 'clock',
    waitsInProcess: false,
    give: clock,
  },
  {
    // A resume right after a kill is before the deadline (on a quick machine): it waits the rest.
    name: 'timed wait, resumed at once',
    calls: [{ id: 't1_wait', name: 'wait', input: { seconds: 0.3 }, needs: 'wait' }],
    verdict: 'answered',
    endedBy: 'clock',
    waitsInProcess: true,
    give: nothing,
  },
  {
    // Two waits for one event: a signal is taken by one call only, and the second waits for its own.
    name: 'event wait, signalled (two waits of one event)',
    calls: [
      { id: 't1_wait_a', name: 'wait', input: { event: EVENT, timeoutSeconds: 3600 }, needs: 'wait' },
      { id: 't1_wait_b', name: 'wait', input: { event: EVENT, timeoutSeconds: 3600 }, needs: 'wait' },
    ],
    verdict: 'answered',
    endedBy: 'signal',
    waitsInProcess: false,
    give: signal,
  },
  {
    name: 'event wait, timed out',
    calls: [{ id: 't1_wait', name: 'wait', input: { event: EVENT, timeoutSeconds: 0.05 }, needs: 'wait' }],
    verdict: 'answered',
    endedBy: 'clock',
    waitsInProcess: false,
    give: clock,
  },
];

/** The kind's reply, as the walk's first. */
function replyOf(kind: AwaitKind): PathEvent {
  return {
    type: 'MODEL_REPLY',
    label: `reply: ${kind.calls.map((call) => call.name).join(' + ')}`,
    reply: toolUseReply(kind.calls.map(({ id, name, input }) => ({ id, name, input }))),
    needsDecision: Object.fromEntries(kind.calls.map((call) => [call.id, call.needs])),
  };
}

/** The decision the machine takes about a call of the kind (its by and at are the world's). */
function decisionOf(kind: AwaitKind, tool_use_id: string): PathEvent {
  // A child's end carries the child it came from: only that answers a call that waits for its child.
  const base = { tool_use_id, by: kind.endedBy, at: 0, ...(kind.endedBy === 'child' ? { child: { runId: `child-of-${tool_use_id}`, state: 'done' } } : {}) };
  const decision: Decision =
    kind.verdict === 'approved' ? { ...base, verdict: 'approved' } : kind.verdict === 'denied' ? { ...base, verdict: 'denied', reason: 'not now' } : { ...base, verdict: 'answered', text: 'it came' };
  return { type: 'DECISION', label: `${tool_use_id} ${kind.verdict} (${kind.endedBy})`, decision };
}

/** The kind's one path: its reply, each call waits and is decided (an approved one runs), the turn closes, the run ends. */
export function awaitKindEventsFor(kind: AwaitKind): (snapshot: Snapshot) => PathEvent[] {
  return ({ value, context }) => {
    if (value === 'awaitingModel' && context.messages.length === 1) return [replyOf(kind)];
    if (value === 'closed') return [endTurnEvent()];
    if (value === 'awaitingDecision') return [decisionOf(kind, context.awaiting!.tool_use_id)];
    if (value !== 'pendingTool' && value !== 'effectRecorded') return [];
    const call = openCalls(context)[0];
    if (!call) return [{ type: 'CLOSE_TURN', label: 'close turn' }];
    if (awaitsDecision(context, call)) return [{ type: 'DECISION_NEEDED', tool_use_id: call.id, at: 0, label: `${call.name} waits` }];
    return [toolResultEvent(call, 'ok')];
  };
}
