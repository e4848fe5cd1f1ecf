/**
 * Walks the agent loop machine with @xstate/graph and turns every path into a scenario the real
 * runtime can play (the model's replies, each tool's behaviour, the ledger writes that fail) and
 * the crash labels the runtime passes at every step of it.
 */
import { getShortestPaths, getSimplePaths, type StatePath } from '@xstate/graph';
import { type AnyTransitionDefinition, transition } from 'xstate';
import { type AnnouncedEffect, announcedEffectOf, effectOfActions } from '../../machines/agent-loop.effects.ts';
import { awaitsDecision, openCalls } from '../../machines/agent-loop.logic.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { FINAL_STATES, LIVE_STATES } from '../../machines/agent-loop.states.ts';
import type { AgentEvent, AgentStateName, Budget, Cancellation, ModelReply } from '../../machines/agent-loop.types.ts';
import { ZERO_USAGE } from '../../machines/agent-loop.types.ts';
import type { DecisionReply } from '../../src/awaits/decision-step.ts';
import { pointOf } from '../../src/store/journal/record-points.ts';
import { guardText, guardTreeOf } from '../../visualizer/machine-graph.ts';
import { APPROVAL_REPLIES, approvalReplies, decisionEvents, inApprovalWalk } from './walks/approval.ts';
import { type AwaitKind, awaitKindEventsFor } from './walks/await-kinds.ts';
import { afterAnotherRunEventsFor, type ForkMoment, forkEventsFor, SHARED_CALL_ID, TWIN_IDS, twinEventsFor } from './walks/decision-identity.ts';
import { BUDGET_WALK, budgetEventsFor, inBudgetWalk } from './walks/budget.ts';
import { compactionEvents, holdsLongText, inCompactionWalk, LONG_TEXT, longReplies } from './walks/compaction.ts';
import { coreReplies, coreResults } from './walks/core.ts';
import { reopenEventsFor } from './walks/reopen.ts';
import { closedParallelTurn, inParallelWalk, OVERLAPPING_TOOLS, PARALLEL_REPLIES, parallelReplies, parallelResults, TOGETHER_IDS, TOGETHER_REPLY } from './walks/parallel.ts';
import { endTurnEvent, type PathEvent, PAUSE_LIMIT, type Snapshot, type ToolBehaviour } from './walks/path-event.ts';

export type { PathEvent, Snapshot, ToolBehaviour } from './walks/path-event.ts';
export { FINISH_TEXT, PAUSE_LIMIT } from './walks/path-event.ts';
export { LONG_TEXT } from './walks/compaction.ts';
export { BUDGET_WALK } from './walks/budget.ts';
export { OVERLAPPING_TOOLS, startableCalls } from './walks/parallel.ts';

export interface Scenario {
  maxTurns: number;
  maxPausesInARow: number;
  /** The model's replies in order; the scripted model ends the turn after them. */
  replies: ModelReply[];
  behaviours: Record<string, ToolBehaviour>;
  /** Which ledger write attempts fail (1-based, counted over the uninterrupted run). */
  failingEffectWrites: number[];
  /** What the run's onDecision handler answers, by tool_use_id (publish needs approval, ask_user an answer). */
  decisions: Record<string, DecisionReply>;
  /**
   * A turn whose read-only calls run side by side: the order they finish in (each returns once
   * those before it are recorded). Set only by the replies of parallel read-only calls.
   */
  finishOrder?: string[];
  /**
   * A turn whose read-only calls all return at the same instant (each once all have started): the
   * first outcome is written alone, the others come back while it waits for the disk and are
   * written together after it, as one unit (group commit). Set only by the reply of grouped lookups.
   */
  finishTogether?: string[];
  /**
   * Where a cancel is asked (written to the run's real control inbox) as the run saves this step:
   * a {@link stepFingerprint}. Absent: never cancelled.
   */
  cancelAt?: string;
  /** The run's budget (the budget walk only). */
  budget?: Budget | undefined;
  /** Set when a reply is long enough to compact after (client compaction on): whether the summary has text. */
  compaction?: { summary: 'ok' | 'empty' };
  /**
   * Before the run starts, another run in the same store stopped waiting for a call of this id,
   * and a person approved that call in the other run's inbox; this run starts afresh (the other
   * one moved aside, its inbox with it). Set by the walk after another run only.
   */
  anotherRunFirst?: { tool_use_id: string };
  /**
   * Where the run saves the step that waits for this call, a person writes `decision` (the one the
   * path gives) to the run's inbox, and the run is forked at that record: the decision written
   * before the fork, or while it is under way (`moment`). Set by the fork walk only.
   */
  forkAt?: { at: string; tool_use_id: string; decision: DecisionReply; moment: ForkMoment };
  /**
   * The processes after the first, in order: each takes the run up with what it gives (`resume`)
   * once the process before it ended, by itself (`after` null: the run stopped in a final state)
   * or killed right after it saved the step `after` (a {@link stepFingerprint}).
   */
  takeUps?: TakeUp[];
}

export interface TakeUp {
  after: string | null;
  resume: { maxTurns?: number; budget?: Budget; message?: string };
}

/**
 * What a saved step is, as the graph and the runtime's `saved` events both can say it. The calls
 * recorded so far count as a set: each step of a turn adds one, and calls that run side by side
 * may finish in another order on a resume than the path says, at the same step.
 */
export function stepFingerprint(state: string, event: string, turn: number, pending: readonly string[], recorded: readonly string[]): string {
  return JSON.stringify([state, event, turn, pending, [...recorded].sort()]);
}

export const CANCELLATION: Cancellation = { by: 'api', reason: 'enough', at: 0 };

export interface PathStep {
  from: AgentStateName;
  to: AgentStateName;
  event: PathEvent;
  /** Crash labels the runtime passes while taking this step, in order. */
  labels: string[];
  /** The machine's transition definitions this step took (none for the initial state). */
  transitions: readonly AnyTransitionDefinition[];
  /** What the live transition announced, and what the resting snapshot announces on its own. */
  effects: { returned: AnnouncedEffect | null; announced: AnnouncedEffect | null };
  /**
   * Set where the step's ledger entry is written without an fsync of its own (the turn's last
   * entry, and what was written in one unit with it): how many records a power loss right after
   * the step's entry takes back.
   */
  unsynced?: number;
}

export interface CrashPath {
  id: number;
  source: 'shortest' | 'simple';
  steps: PathStep[];
  scenario: Scenario;
  scenarioKey: string;
}

/**
 * With cancel: a smaller graph (a two-call turn and a turn with an approval, every call running,
 * approvals given) in which every state that is not final is also cancelled.
 */
export function cancelEventsFor(snapshot: Snapshot): PathEvent[] {
  const kept = new Set(['reply: lookup + charge_card', 'reply: publish + lookup', 'reply: end_turn']);
  return withCancel(snapshot, (event) => {
    if (event.type === 'MODEL_REPLY' || event.type === 'MODEL_REPLY_INVALID') return kept.has(event.label);
    if (event.type === 'TOOL_RESULT') return event.behaviour === 'ok';
    if (event.type === 'DECISION') return event.decision.verdict === 'approved';
    return true;
  });
}

/** What the cross walk cancels in: each capability on a graph of its own, with a cancel in every live state of it. */
export type Capability = 'compaction' | 'approval' | 'budget' | 'parallel';

/**
 * The events of each capability's graph (eventsFor's, every call running): the replies that
 * start it, then what the walk offers after them (one ending after the turn, the compaction
 * after a long reply).
 */
const CAPABILITY_EVENTS: Record<Capability, (event: PathEvent, snapshot: Snapshot) => boolean> = {
  compaction: inCompactionWalk,
  approval: inApprovalWalk,
  budget: inBudgetWalk,
  parallel: inParallelWalk,
};

/** The cross walk of one capability: its events, every call running, and a cancel wherever the runtime can take one. */
function crossCancelEventsFor(capability: Capability): (snapshot: Snapshot) => PathEvent[] {
  const keeps = CAPABILITY_EVENTS[capability];
  return (snapshot) => withCancel(snapshot, (event) => (event.type === 'TOOL_RESULT' ? event.behaviour === 'ok' : keeps(event, snapshot)));
}

/** The walk's events that `keep` keeps, and a cancel where the runtime meets a step boundary in this state. */
function withCancel(snapshot: Snapshot, keep: (event: PathEvent) => boolean): PathEvent[] {
  if (FINAL_STATES.includes(snapshot.value as AgentStateName)) return [];
  const events = eventsFor(snapshot).filter(keep);
  return takesCancel(snapshot) ? [...events, { type: 'CANCEL', cancellation: CANCELLATION, label: 'cancel' }] : events;
}

/**
 * Whether a cancel asked as this state was saved is taken in it: the runtime looks at its inbox
 * at each step boundary, and an effectRecorded meets none when the turn's close or the record of
 * a call already running comes next.
 */
function takesCancel(snapshot: Snapshot): boolean {
  if (snapshot.value !== 'effectRecorded') return true;
  // A turn's last outcome and its close are one step of the runtime (the entry, then B at once: one
  // fsync for both): no boundary lies between them.
  if (openCalls(snapshot.context).length === 0) return false;
  // Calls started side by side with the one just recorded are still running: they are recorded before the next boundary.
  return !callsInFlight(snapshot.context);
}

/**
 * Whether an open call was started together with one already recorded: the read-only calls of a
 * run of them start together (startableCalls), once every call before them is recorded.
 */
function callsInFlight(context: Snapshot['context']): boolean {
  const recorded = new Set(context.results.map((outcome) => outcome.tool_use_id));
  let group: string[] = [];
  for (const call of [...context.pending, null]) {
    if (call && call.needs === undefined && OVERLAPPING_TOOLS.has(call.name)) {
      group.push(call.id);
      continue;
    }
    if (group.some((id) => recorded.has(id)) && group.some((id) => !recorded.has(id))) return true;
    group = [];
  }
  return false;
}

/**
 * The events offered in each state: realistic payloads, bounded so the graph is finite. Each
 * capability offers its own (walks/): the core loop's replies and tool outcomes, approvals and
 * questions, parallel calls, client compaction; a run with a budget walks the budget's alone.
 */
export function eventsFor(snapshot: Snapshot): PathEvent[] {
  const state = snapshot.value as AgentStateName;
  const context = snapshot.context;
  if (context.budget) return budgetEventsFor(snapshot);
  if (state === 'closed' && (context.decisions.length > 0 || closedParallelTurn(context))) {
    // After a turn with decisions or parallel calls, one ending is enough: what follows a close is walked on the other turns.
    return [endTurnEvent()];
  }
  const compacting = compactionEvents(snapshot);
  if (compacting) return compacting;
  if (state === 'awaitingModel' || state === 'closed') {
    const t = context.turn + 1;
    return [...coreReplies(context, t), ...approvalReplies(context), ...parallelReplies(context), ...longReplies(context)];
  }
  if (state === 'pendingTool' || state === 'effectRecorded') {
    const call = openCalls(context)[0];
    if (!call) return [{ type: 'CLOSE_TURN', label: 'close turn' }];
    if (awaitsDecision(context, call)) return [{ type: 'DECISION_NEEDED', tool_use_id: call.id, at: 0, label: `${call.name} waits` }];
    return parallelResults(context, call) ?? coreResults(context, call);
  }
  if (state === 'awaitingDecision') return decisionEvents(snapshot);
  return [];
}

/** States that differ only in message text are the same state for the walk. */
function serializeState(snapshot: Snapshot): string {
  const c = snapshot.context;
  return JSON.stringify([
    snapshot.value,
    c.turn,
    c.messages.length,
    c.pending.map((call) => call.id),
    c.results.map((o) => `${o.tool_use_id}:${o.content as string}`),
    c.decisions.map((d) => `${d.tool_use_id}:${d.verdict}`),
    c.heldReply !== null,
    c.failure?.reason ?? null,
    // A turn closed after parallel calls is followed by one ending only (eventsFor): not the same state for the walk.
    snapshot.value === 'closed' && closedParallelTurn(c),
    c.compacted?.times ?? 0,
    c.messages.some(holdsLongText),
    // A live run taken up with more turns is in another state for the walk than before.
    c.maxTurns,
  ]);
}

function serializeEvent(event: PathEvent): string {
  return event.type === 'TOOL_RESULT' ? `${event.label}:${event.outcome.tool_use_id}` : event.label;
}

function walk(kind: 'shortest' | 'simple', maxTurns: number, maxPausesInARow: number, extra?: WalkExtra): StatePath<Snapshot, PathEvent & AgentEvent>[] {
  const budget = budgetOf(extra);
  const options = {
    input: { task: 'the task', maxTurns, maxPausesInARow, ...(budget ? { budget } : {}) },
    events: eventsOfWalk(extra) as unknown as (s: Snapshot) => AgentEvent[],
    serializeState: serializeState as (s: Snapshot) => string,
    serializeEvent: serializeEvent as unknown as (e: AgentEvent) => string,
  };
  const paths = kind === 'shortest' ? getShortestPaths(agentLoopMachine, options) : getSimplePaths(agentLoopMachine, options);
  return paths as unknown as StatePath<Snapshot, PathEvent & AgentEvent>[];
}

function eventsOfWalk(extra: WalkExtra | undefined): (snapshot: Snapshot) => PathEvent[] {
  if (extra === 'cancel') return cancelEventsFor;
  if (extra === 'reopen') return reopenEventsFor;
  if (extra === 'twins') return (snapshot) => twinEventsFor(snapshot, eventsFor);
  if (extra === 'after-another-run') return (snapshot) => afterAnotherRunEventsFor(snapshot, eventsFor);
  if (typeof extra === 'object' && 'forkWhileWaiting' in extra) return (snapshot) => forkEventsFor(snapshot, eventsFor, APPROVAL_REPLIES);
  if (typeof extra === 'object' && 'cancelIn' in extra) return crossCancelEventsFor(extra.cancelIn);
  if (typeof extra === 'object' && 'awaitKind' in extra) return awaitKindEventsFor(extra.awaitKind);
  return eventsFor;
}

/** The run's budget: the walk's own, or the budget walk's for the cross walk of budgets. */
function budgetOf(extra: WalkExtra | undefined): Budget | undefined {
  if (typeof extra !== 'object' || 'forkWhileWaiting' in extra || 'awaitKind' in extra) return undefined;
  if (!('cancelIn' in extra)) return extra;
  return extra.cancelIn === 'budget' ? BUDGET_WALK : undefined;
}

/**
 * The paths the crash suite covers: every simple path with MAX_TURNS=1 (all of turn 1 and the
 * MAX_TURNS stop; a pause continued, then one too many), the shortest path to every state with
 * MAX_TURNS=2 (a second turn, ids across turns, a stop after two turns), and the shortest path
 * to every state with MAX_TURNS=1 and no pause allowed (the pause limit met in `closed`), every
 * simple path of a run whose token budget the first reply reaches (the stop at the budget, and
 * the resume with a larger one), every simple path of a small run taken up again in each of its
 * states (a final one given what it lacked, a live one killed and given more turns), and
 * the cross walk: a cancel in every live state of client compaction, approvals and questions, the
 * budget and parallel calls.
 */
export interface GeneratedPaths {
  /** Paths the walks produced, before merging. */
  walked: number;
  /**
   * One path per distinct scenario: a path that is a prefix of a longer one with the same
   * scenario (same replies, tool behaviours and faults) crashes the runtime at a subset of the
   * same points, so the longest stands for both.
   */
  paths: CrashPath[];
}

/**
 * What a walk adds: cancels (a small graph), the run taken up again (a small graph), a budget,
 * cancels in one capability's graph (the cross walk), one of the walks of whose a decision is
 * (walks/decision-identity.ts: the twins, after another run, a fork while a call waits), or the
 * one path of a kind of await (walks/await-kinds.ts).
 */
export type WalkExtra = 'cancel' | 'reopen' | 'twins' | 'after-another-run' | Budget | { cancelIn: Capability } | { forkWhileWaiting: ForkMoment } | { awaitKind: AwaitKind };

/** How to walk, with which MAX_TURNS, which pause limit (default {@link PAUSE_LIMIT}), and with cancels or a budget. */
export type PathSource = readonly ['simple' | 'shortest', number, number?, WalkExtra?];

export const ALL_PATHS: readonly PathSource[] = [
  ['simple', 1, 1],
  ['shortest', 2, 1],
  ['shortest', 1, 0],
  ['simple', 1, 1, 'cancel'],
  // Taken up again: every final state but cancelled given what it lacked, every live state killed and resumed with more turns.
  ['simple', 1, 0, 'reopen'],
  ['simple', 2, 1, BUDGET_WALK],
  // The cross walk: a cancel in every live state of each capability's walk.
  ['simple', 1, 1, { cancelIn: 'compaction' }],
  ['simple', 1, 1, { cancelIn: 'approval' }],
  ['simple', 2, 1, { cancelIn: 'budget' }],
  ['simple', 1, 1, { cancelIn: 'parallel' }],
  // Whose a decision is: twin calls decided one by one, a run after another with a decided call of the same id, a fork while a decision waits.
  ['simple', 1, 1, 'twins'],
  ['simple', 1, 1, 'after-another-run'],
  ['simple', 1, 1, { forkWhileWaiting: 'before-fork' }],
  ['simple', 1, 1, { forkWhileWaiting: 'during-fork' }],
];

export function generateCrashPaths(sources: readonly PathSource[] = ALL_PATHS): GeneratedPaths {
  const byScenario = new Map<string, CrashPath>();
  let walked = 0;
  for (const [kind, maxTurns, pauseLimit = PAUSE_LIMIT, extra] of sources) {
    const budget = budgetOf(extra);
    for (const path of walk(kind, maxTurns, pauseLimit, extra)) {
      walked += 1;
      const crashPath = toCrashPath(path, kind, { maxTurns, maxPausesInARow: pauseLimit, ...(budget ? { budget } : {}) }, extra);
      if (!crashPath) continue;
      const known = byScenario.get(crashPath.scenarioKey);
      if (!known || known.steps.length < crashPath.steps.length) byScenario.set(crashPath.scenarioKey, crashPath);
    }
  }
  const paths = [...byScenario.values()].map((path, index) => ({ ...path, id: index + 1 }));
  return { walked, paths };
}

/** Null for a path of a walk of whose a decision is that does not reach what the walk is about. */
function toCrashPath(
  path: StatePath<Snapshot, PathEvent & AgentEvent>,
  source: 'simple' | 'shortest',
  limits: Pick<Scenario, 'maxTurns' | 'maxPausesInARow' | 'budget'>,
  extra?: WalkExtra,
): CrashPath | null {
  const scenario: Scenario = { ...limits, replies: [], behaviours: {}, failingEffectWrites: [], decisions: {} };
  const counts = new Map<string, number>();
  const next = (point: string) => {
    const n = (counts.get(point) ?? 0) + 1;
    counts.set(point, n);
    return `after-${point}:${n}`;
  };
  let effectWriteAttempts = 0;
  /** Calls of the parallel turn finished so far (their place in finishOrder is fixed). */
  let finished = 0;
  const steps: PathStep[] = [];
  // The first step is the initial state (reached by xstate.init): the record that creates the run.
  const [first, ...rest] = path.steps;
  const initial = first!.state;
  steps.push({
    from: 'awaitingModel',
    to: initial.value as AgentStateName,
    event: { type: 'CLOSE_TURN', label: 'start' } as PathEvent,
    labels: [next('save-start')],
    transitions: [],
    effects: { returned: 'requestModelReply', announced: announcedEffectOf(initial.value as AgentStateName, initial.context) },
  });
  let from = initial.value as AgentStateName;
  let before: Snapshot = initial;
  let lastEvent = 'START';
  /** Each step that waits for a decision: the call, and the saved step as the runtime reports it. */
  const waits: Array<{ id: string; at: string }> = [];
  for (const step of rest) {
    const event = step.event as PathEvent;
    const to = step.state.value as AgentStateName;
    const transitions = agentLoopMachine.getTransitionData(before, event as AgentEvent);
    const [, actions] = transition(agentLoopMachine, before, event as AgentEvent);
    // A process that takes up a live run (REOPEN in place) goes on with the effect its snapshot announces.
    const inPlace = event.type === 'REOPEN' && to === from ? announcedEffectOf(from, before.context) : null;
    const effects = { returned: effectOfActions(actions) ?? inPlace, announced: announcedEffectOf(to, step.state.context) };
    const cancelledFrom = before;
    before = step.state;
    const labels: string[] = [];
    let unsynced = 0;
    if (event.type === 'MODEL_REPLY' && JSON.stringify(event.reply.content).includes(LONG_TEXT)) scenario.compaction ??= { summary: 'ok' };
    const usageStep = usageStepBefore(from, cancelledFrom, event, next);
    if (usageStep) steps.push(usageStep);
    switch (event.type) {
      case 'COMPACT':
        labels.push(next('save-compacting'));
        break;
      case 'COMPACTED':
        labels.push(next('save-compacted'));
        break;
      case 'MODEL_REPLY_INVALID':
        if (from === 'compacting') {
          scenario.compaction = { summary: 'empty' };
          labels.push(next('save-failed'));
          break;
        }
        scenario.replies.push(event.reply);
        labels.push(next(pointOf({ event: 'MODEL_REPLY', state: to })));
        break;
      case 'MODEL_REPLY':
        // The reply held at MAX_TURNS was the model's already: acting on it asks the model nothing.
        if (!event.held) scenario.replies.push((event.sent ?? event.reply) as ModelReply);
        if (PARALLEL_REPLIES.has(event.label)) {
          // Until the path says otherwise, the calls finish in the model's order: a path that stops
          // part-way is then the same scenario as the longer one that goes on in that order.
          const ids = event.reply.content.flatMap((block) => (block.type === 'tool_use' ? [block.id as string] : []));
          for (const id of ids) scenario.behaviours[id] = 'ok';
          scenario.finishOrder = ids.filter((id) => OVERLAPPING_TOOLS.has(nameOf(event.reply, id)));
          finished = 0;
        }
        if (event.label === TOGETHER_REPLY) {
          for (const id of TOGETHER_IDS) scenario.behaviours[id] = 'ok';
          scenario.finishTogether = [...TOGETHER_IDS];
        }
        labels.push(next(pointOf({ event: 'MODEL_REPLY', state: to })));
        break;
      case 'TOOL_RESULT':
        effectWriteAttempts += 1;
        scenario.behaviours[event.outcome.tool_use_id] = event.behaviour;
        if (scenario.finishOrder?.includes(event.outcome.tool_use_id)) {
          const order = scenario.finishOrder.filter((id) => id !== event.outcome.tool_use_id);
          order.splice(finished++, 0, event.outcome.tool_use_id);
          scenario.finishOrder = order;
        }
        if (scenario.finishTogether?.includes(event.outcome.tool_use_id)) {
          // All return before the first outcome is durable; the others are written after it as one
          // unit, the turn's last among them: written, its fsync checkpoint B's.
          const first = event.outcome.tool_use_id === scenario.finishTogether[0];
          if (first) for (const _ of scenario.finishTogether) labels.push(next('tool-return'));
          labels.push(next('effect-write'));
          if (!first) unsynced = scenario.finishTogether.length - 1;
          break;
        }
        labels.push(next('tool-return'));
        if (event.behaviour === 'ledger-write-fails') scenario.failingEffectWrites.push(effectWriteAttempts);
        else labels.push(next('effect-write'));
        if (effects.returned === 'requestTurnClose') unsynced = 1;
        break;
      case 'CLOSE_TURN':
        labels.push(next('save-b'));
        // A turn with a sub-agent's child run is charged what the child spent in the close's unit: a MODEL_USAGE record after it.
        if (cancelledFrom.context.pending.some((call) => call.needs === 'child')) labels.push(next('model-reply'));
        break;
      case 'DECISION_NEEDED': {
        const { context } = step.state;
        waits.push({ id: event.tool_use_id, at: stepFingerprint(to, 'DECISION_NEEDED', context.turn, context.pending.map((call) => call.id), context.results.map((o) => o.tool_use_id)) });
        labels.push(next('save-waiting'));
        break;
      }
      case 'CANCEL': {
        const { context } = cancelledFrom;
        scenario.cancelAt = stepFingerprint(from, lastEvent, context.turn, context.pending.map((call) => call.id), context.results.map((o) => o.tool_use_id));
        labels.push(next('save-cancelled'));
        break;
      }
      case 'DECISION': {
        const { verdict, reason, text } = event.decision;
        scenario.decisions[event.decision.tool_use_id] =
          verdict === 'approved' ? { verdict } : verdict === 'denied' ? { verdict, reason: reason! } : { verdict, text: text! };
        labels.push(next('save-decision'));
        break;
      }
      case 'BUDGET_REACHED':
        labels.push(next('save-budget'));
        break;
      case 'REOPEN': {
        const { context } = cancelledFrom;
        const after = FINAL_STATES.includes(from) ? null : stepFingerprint(from, lastEvent, context.turn, context.pending.map((call) => call.id), context.results.map((o) => o.tool_use_id));
        const resume = {
          ...(event.maxTurns !== context.maxTurns ? { maxTurns: event.maxTurns } : {}),
          ...(event.budget?.budget ? { budget: event.budget.budget } : {}),
          ...(event.message !== undefined ? { message: event.message } : {}),
        };
        (scenario.takeUps ??= []).push({ after, resume });
        labels.push(next('save-reopen'));
        break;
      }
    }
    steps.push({ from, to, event, labels, transitions, effects, ...(unsynced ? { unsynced } : {}) });
    from = to;
    lastEvent = event.type;
  }
  if (!withDecisionIdentity(scenario, extra, waits)) return null;
  return { id: 0, source, steps, scenario, scenarioKey: JSON.stringify(scenario) };
}

/**
 * What the walks of whose a decision is add to a path's scenario; false for a path that does not
 * reach what its walk is about (twin calls, the call the other run decided, a decided wait to fork at).
 */
function withDecisionIdentity(scenario: Scenario, extra: WalkExtra | undefined, waits: ReadonlyArray<{ id: string; at: string }>): boolean {
  const named = (id: string) => scenario.replies.some((reply) => reply.content.some((block) => block?.type === 'tool_use' && block.id === id));
  if (extra === 'twins') return TWIN_IDS.every(named);
  if (extra === 'after-another-run') {
    if (!named(SHARED_CALL_ID)) return false;
    scenario.anotherRunFirst = { tool_use_id: SHARED_CALL_ID };
    return true;
  }
  if (typeof extra === 'object' && 'forkWhileWaiting' in extra) {
    const wait = waits.find((candidate) => scenario.decisions[candidate.id] !== undefined);
    if (!wait) return false;
    scenario.forkAt = { at: wait.at, tool_use_id: wait.id, decision: scenario.decisions[wait.id]!, moment: extra.forkWhileWaiting };
    return true;
  }
  return true;
}

/**
 * Every reply of a model call (a reply, one refused, a summary) is preceded by its MODEL_USAGE:
 * the tokens are counted, in a record of their own, before the reply is saved. The walk offers the
 * reply alone (a targetless step changes no state the graph tells apart); the path takes the
 * machine's own MODEL_USAGE transition before it, with the reply's tokens (the runtime then gives
 * the reply with none: the machine counts them once).
 */
function usageStepBefore(from: AgentStateName, before: Snapshot, event: PathEvent, next: (point: string) => string): PathStep | null {
  if (event.type === 'MODEL_REPLY' && event.held) return null;
  const usage = usageOfCall(event);
  if (!usage) return null;
  const counted: PathEvent = { type: 'MODEL_USAGE', usage, label: `usage: ${event.label}` };
  const [after, actions] = transition(agentLoopMachine, before, counted as AgentEvent);
  if (after === before) throw new Error(`the machine did not take MODEL_USAGE in ${from}`);
  // Targetless: the live run is still inside the call it counts, and goes on with it; the
  // resting snapshot announces that call again (a resume from here asks once more).
  const underWay = announcedEffectOf(from, before.context);
  return {
    from,
    to: after.value as AgentStateName,
    event: counted,
    labels: [next('model-reply')],
    transitions: agentLoopMachine.getTransitionData(before, counted as AgentEvent),
    effects: { returned: effectOfActions(actions) ?? underWay, announced: announcedEffectOf(after.value as AgentStateName, after.context) },
  };
}

/** The tokens a model call brings with the event the path gives its reply as, or null when the event is no model call's. */
function usageOfCall(event: PathEvent): ModelReply['usage'] | null {
  switch (event.type) {
    case 'MODEL_REPLY':
      return event.sent === undefined ? event.reply.usage : ((event.sent as { usage?: ModelReply['usage'] }).usage ?? ZERO_USAGE);
    case 'MODEL_REPLY_INVALID':
      return event.reply.usage;
    case 'COMPACTED':
      // The summary's tokens: the walk's states do not tell usage apart, and no budget walk compacts.
      return ZERO_USAGE;
    default:
      return null;
  }
}

function nameOf(reply: ModelReply, id: string): string {
  return String(reply.content.find((block) => block.type === 'tool_use' && block.id === id)?.name);
}

/** How a step reads in a test name: `closed -[reply: send_email]-> pendingTool`. */
export function describeStep(step: PathStep): string {
  return `${step.from} -[${step.event.label}]-> ${step.to}`;
}

export function describeTrace(path: CrashPath, crashStep: number, label: string): string {
  return path.steps
    .map((step, i) => `${i === crashStep ? '✂' : ' '} ${String(i).padStart(2)} ${describeStep(step)}  [${step.labels.join(', ')}]${i === crashStep ? `  ← crashed at ${label}` : ''}`)
    .join('\n');
}

/**
 * Every transition the machine defines, per state: what the coverage test expects to see taken.
 * The root's (CANCEL) is taken in every live state, so it is expected from each of them.
 */
export function machineTransitions(): Map<AgentStateName, AnyTransitionDefinition[]> {
  const fromRoot = [...agentLoopMachine.root.transitions.values()].flat();
  const byState = new Map<AgentStateName, AnyTransitionDefinition[]>();
  for (const [key, node] of Object.entries(agentLoopMachine.root.states)) {
    byState.set(key as AgentStateName, [...[...node.transitions.values()].flat(), ...(LIVE_STATES.includes(key as AgentStateName) ? fromRoot : [])]);
  }
  return byState;
}

/** How a transition reads in the coverage test, from the state it is taken in (the root's have none of their own). */
export function describeTransition(from: AgentStateName, definition: AnyTransitionDefinition): string {
  const guard = definition.guard ? ` [${guardText(guardTreeOf(definition.guard))}]` : '';
  const targets = (definition.target ?? []).map((node) => node.key).join(',');
  return `${from} -${definition.eventType}${guard}-> ${targets || '(self)'}`;
}
