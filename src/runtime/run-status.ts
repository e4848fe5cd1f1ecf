/**
 * Where a run stands and what it did, read from its store alone. Reading takes no lock and
 * changes nothing, so it is safe while another process drives the run.
 */
import { addUsage, openCalls, totalTokens } from '../../machines/agent-loop.logic.ts';
import type { ControlRequest } from '../control/control-request.ts';
import type { AgentContext, AgentStateName, Budget, BudgetStop, Cancellation, Message, Decision, DecisionNeed, RunFailure, TokenUsage } from '../../machines/agent-loop.types.ts';
import { estimateCost } from '../model/prices.ts';
import { type DecidedCall, DecisionTrail } from '../awaits/decision-trail.ts';
import { waitingCallsOf } from '../awaits/waiting-calls.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import { type ForkNote, readForkNotes } from '../fork/fork-notes.ts';
import type { CalledBy, ForkOrigin, JournalRecord, ReconcileNote, RecordEvent, RecordNote } from '../store/journal/journal-record.ts';
import { type ChildRun, callIdsOf, childRunsOf } from './run-tree.ts';
import type { PointName } from '../store/journal/record-points.ts';
import { pointOf } from '../store/journal/record-points.ts';
import type { RecoveredTornTail, RunStore } from '../store/store.ts';
import type { WaitingCall } from '../core/run-events.ts';
import { tenantOf } from '../core/tenant.ts';
import { type Payload, payloadsIn } from '../util/rich-blocks.ts';

export interface PendingCallStatus {
  id: string;
  name: string;
  recorded: boolean;
}

export interface RunStatus {
  runId: string;
  location: string;
  task: string;
  state: AgentStateName;
  turn: number;
  maxTurns: number;
  pending: PendingCallStatus[];
  /** The calls that wait for a person's decision, the awaited one first (since when it waits). */
  waiting: WaitingCall[];
  /** The decisions of the open turn, in the order they were made. */
  decisions: Decision[];
  /** Every decision of the run, oldest first: who, how, when, and how long the call waited. */
  decided: DecidedCall[];
  ledgerEntries: number;
  usage: TokenUsage;
  finalText: string | null;
  failure: RunFailure | null;
  lastSave: { seq: number; point: PointName; at: number; bytes: number };
  records: number;
  journalBytes: number;
  /** A record cut off by a crash, which a resume will drop. */
  tornTail: RecoveredTornTail | null;
  /** How the last resume settled the calls it found open, with the rule that decided each. */
  reconciled: ReconcileNote[];
  /** Each time the finished conversation was continued with a new message, oldest first. */
  continued: ContinuedStep[];
  /** Who cancelled the run, why and when (state cancelled). */
  cancellation: Cancellation | null;
  /** Cancel and pause requests waiting in the run's control inbox (a pause stays until a resume clears it). */
  controls: ControlRequest[];
  /** The run's budget (null: none). */
  budget: Budget | null;
  /**
   * US dollars so far at list prices: counted reply by reply while the run has a cost budget,
   * else estimated at the list price of the model that started it; null when it has no price.
   */
  costUsd: number | null;
  /** True when costUsd is the estimate at the starting model's price, not the count of a cost budget. */
  costIsEstimate: boolean;
  /** What is left of each limit of the budget (0 once reached); null without a budget. */
  remaining: { costUsd?: number; tokens?: number } | null;
  /** Which budget stopped the run, with the figures (state stoppedAtBudget). */
  budgetStop: BudgetStop | null;
  /** The run this one was forked from (its records up to forkedFrom.seq are the parent's), else null. */
  forkedFrom: ForkOrigin | null;
  /** The runs forked from this one, oldest first (a file run's forks.jsonl; none elsewhere). */
  forks: ForkNote[];
  /** For a sub-agent's child run: the run and call that started it; else null. */
  calledBy: CalledBy | null;
  /** Whose the run is (core/tenant.ts): 'default' for a run started without one. */
  tenant: string;
  /** The sub-agent runs its calls started (and theirs), by call (a file run's folder; none elsewhere). */
  children: ChildRunStatus[];
  /** What of `usage` was charged for its sub-agent runs when their turns closed (null: nothing); the rest is its own model's. */
  chargedUsage: TokenUsage | null;
}

/** A sub-agent run under a run, as status shows it. */
export interface ChildRunStatus {
  runId: string;
  toolUseId: string;
  state: AgentStateName;
  turn: number;
  task: string;
  usage: TokenUsage;
  costUsd: number | null;
  children: ChildRunStatus[];
}

/** A finished conversation continued (a REOPEN record with note.continued): the message, when, after which turn. */
export interface ContinuedStep {
  seq: number;
  at: number;
  turn: number;
  message: string;
}

export interface HistoryStep {
  seq: number;
  at: number;
  point: PointName;
  state: AgentStateName;
  event: RecordEvent;
  turn: number;
  bytes: number;
  pending: string[];
  ledgerEntries: number;
  note: RecordNote | null;
  /** A DECISION_NEEDED record: the call that began to wait (since this record's `at`), and for what. */
  waitingFor: { tool_use_id: string; name: string; needs: DecisionNeed } | null;
  /** A DECISION record: the decisions it made durable, with how long each call waited. */
  decided: DecidedCall[];
  /** A REOPEN record that continued the finished conversation: the user's new message. */
  continued: { message: string } | null;
  /** A CANCEL record: who cancelled, why, when. */
  cancellation: Cancellation | null;
  /** In a forked run, on the last record it took from its parent: where that parent is. */
  forkedFrom: ForkOrigin | null;
  /** The runs forked from this one at this record. */
  forks: ForkNote[];
  /** The images and documents of the tool results this record wrote (what and how large, never the bytes). */
  payloads: ResultPayloads[];
  /** On the record of a reply that made sub-agent calls: the child run of each (by call). */
  subagents: Array<{ tool_use_id: string; runId: string; state: AgentStateName }>;
}

/** One tool result's images and documents. */
export interface ResultPayloads {
  tool_use_id: string;
  name: string;
  payloads: Payload[];
}

export async function readRunStatus(store: RunStore): Promise<RunStatus> {
  const loaded = await store.load();
  const trail = new DecisionTrail();
  const continued: ContinuedStep[] = [];
  let charged: TokenUsage | null = null;
  let usageBefore: TokenUsage | null = null;
  const view = foldJournal(store.location, loaded, (step, stored) => {
    if (stored.record.note?.charged && usageBefore) charged = addUsage(charged ?? ZERO_USAGE, subtractUsage(step.context.usage, usageBefore));
    usageBefore = step.context.usage;
    trail.add(stored.record, step.context);
    const found = continuedStepOf(stored.record, step.context.messages);
    if (found) continued.push(found);
  });
  const last = loaded.records[loaded.records.length - 1]!;
  const open = new Set(openCalls(view.context).map((call) => call.id));
  const children = await childRunsOf(store, loaded.header.runId, 0, callIdsOf(loaded));
  return {
    runId: loaded.header.runId,
    location: store.location,
    task: view.context.task,
    state: view.state,
    turn: view.context.turn,
    maxTurns: view.context.maxTurns,
    pending: view.context.pending.map((call) => ({ id: call.id, name: call.name, recorded: !open.has(call.id) })),
    waiting: waitingCallsOf(loaded.header.runId, view.context),
    decisions: view.context.decisions,
    decided: trail.decided,
    ledgerEntries: view.ledger.size,
    usage: view.context.usage,
    finalText: view.context.finalText,
    failure: view.context.failure,
    lastSave: { seq: last.record.seq, point: pointOf(last.record), at: last.record.at, bytes: last.bytes },
    records: loaded.records.length,
    journalBytes: loaded.totalBytes,
    tornTail: loaded.tornTail,
    reconciled: lastReconcile(loaded.records.map((stored) => stored.record.note)),
    continued,
    cancellation: view.context.cancellation ?? null,
    controls: store.control ? await store.control.read() : [],
    ...budgetStatusOf(view.context, loaded.header.startedBy?.model ?? null),
    forkedFrom: loaded.header.forkedFrom ?? null,
    forks: forksOf(store, loaded.header.runId),
    calledBy: loaded.header.calledBy ?? null,
    tenant: tenantOf(loaded.header),
    children: children.map(childStatusOf),
    chargedUsage: charged,
  };
}

const ZERO_USAGE: TokenUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

function subtractUsage(after: TokenUsage, before: TokenUsage): TokenUsage {
  return { input: after.input - before.input, output: after.output - before.output, cacheRead: after.cacheRead - before.cacheRead, cacheWrite: after.cacheWrite - before.cacheWrite };
}

function childStatusOf(child: ChildRun): ChildRunStatus {
  const { runId, toolUseId, state, turn, task, usage, costUsd } = child;
  return { runId, toolUseId, state, turn, task, usage, costUsd, children: child.children.map(childStatusOf) };
}

function budgetStatusOf(context: AgentContext, startedWith: string | null): Pick<RunStatus, 'budget' | 'costUsd' | 'costIsEstimate' | 'remaining' | 'budgetStop'> {
  const counted = typeof context.costUsd === 'number' ? context.costUsd : null;
  const costUsd = counted ?? (startedWith ? estimateCost(startedWith, context.usage) : null);
  const budget = context.budget ?? null;
  const remaining: RunStatus['remaining'] = budget ? {} : null;
  if (budget?.maxCostUsd !== undefined) remaining!.costUsd = Math.max(0, budget.maxCostUsd - (counted ?? 0));
  if (budget?.maxTotalTokens !== undefined) remaining!.tokens = Math.max(0, budget.maxTotalTokens - totalTokens(context.usage));
  return { budget, costUsd, costIsEstimate: counted === null && costUsd !== null, remaining, budgetStop: context.budgetStop ?? null };
}

/** A file run's forks, from the note beside its journal; a note that cannot be read shows none. */
function forksOf(store: RunStore, runId: string): ForkNote[] {
  if (store.dir === undefined) return [];
  try {
    return readForkNotes(store.dir, runId);
  } catch {
    return [];
  }
}

/** The images and documents of the results a record adds. */
function resultPayloadsOf(record: JournalRecord): ResultPayloads[] {
  const found: ResultPayloads[] = [];
  // A snapshot restates the turn's results: they were written (and shown) before it.
  if (record.snapshot) return found;
  for (const outcome of record.results?.add ?? []) {
    const payloads = payloadsIn(outcome.content);
    if (payloads.length) found.push({ tool_use_id: outcome.tool_use_id, name: outcome.name, payloads });
  }
  return found;
}

export async function readRunHistory(store: RunStore): Promise<HistoryStep[]> {
  const loaded = await store.load();
  const steps: HistoryStep[] = [];
  const forkedFrom = loaded.header.forkedFrom ?? null;
  const forks = forksOf(store, loaded.header.runId);
  const childByCall = new Map((await childRunsOf(store, loaded.header.runId, 0, callIdsOf(loaded))).map((child) => [child.toolUseId, child]));
  const trail = new DecisionTrail();
  foldJournal(store.location, loaded, (view, stored) => {
    const { record } = stored;
    const known = trail.decided.length;
    trail.add(record, view.context);
    const awaited = record.event === 'DECISION_NEEDED' ? view.context.awaiting : null;
    const call = awaited ? view.context.pending.find((pending) => pending.id === awaited.tool_use_id) : undefined;
    steps.push({
      seq: record.seq,
      at: record.at,
      point: pointOf(record),
      state: record.state,
      event: record.event,
      turn: view.context.turn,
      bytes: stored.bytes,
      pending: view.context.pending.map((call) => call.name),
      ledgerEntries: view.ledger.size,
      note: record.note ?? null,
      waitingFor: call?.needs ? { tool_use_id: call.id, name: call.name, needs: call.needs } : null,
      decided: trail.decided.slice(known),
      continued: continuedStepOf(record, view.context.messages),
      cancellation: record.event === 'CANCEL' ? (view.context.cancellation ?? null) : null,
      forkedFrom: forkedFrom?.seq === record.seq ? forkedFrom : null,
      forks: forks.filter((fork) => fork.seq === record.seq),
      payloads: resultPayloadsOf(record),
      subagents:
        childByCall.size && pointOf(record) === 'save-a'
          ? view.context.pending.flatMap((call) => {
              const child = childByCall.get(call.id);
              return child ? [{ tool_use_id: call.id, runId: child.runId, state: child.state }] : [];
            })
          : [],
    });
  });
  return steps;
}

/** The REOPEN record that continued the conversation appended the user's message: it is the last one. */
function continuedStepOf(record: JournalRecord, messages: readonly Message[]): ContinuedStep | null {
  const turn = record.note?.continued?.turn;
  if (turn === undefined) return null;
  const last = messages[messages.length - 1];
  const message = last?.role !== 'user' ? '' : typeof last.content === 'string' ? last.content : last.content.map((block) => (block.type === 'text' ? String(block.text) : '')).join('');
  return { seq: record.seq, at: record.at, turn, message };
}

/** The reconcile decisions noted from the last resume on (a resume notes itself on its first record). */
function lastReconcile(notes: ReadonlyArray<RecordNote | undefined>): ReconcileNote[] {
  let from = -1;
  notes.forEach((note, index) => {
    if (note?.resumed) from = index;
  });
  if (from < 0) return [];
  return notes.slice(from).flatMap((note) => [...(note?.reused ?? []), ...(note?.reconcile ? [note.reconcile] : [])]);
}
