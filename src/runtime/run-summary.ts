/**
 * A run seen from outside, in one shape wherever it lives: what `durable-agent list` prints, a
 * fleet's status, the console's list of runs and listRuns() return. Made here from a journal (a
 * run of a folder); the fleet's rows are mapped to it in one function beside the queue
 * (src/fleet/fleet-summary.ts). Everything a reader shows of a run in a list is read from it.
 */
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, AgentStateName, DecisionNeed, TokenUsage } from '../../machines/agent-loop.types.ts';
import { waitsForWords } from '../awaits/wait-words.ts';
import { DEFAULT_TENANT, tenantOf } from '../core/tenant.ts';
import { estimateCost } from '../model/prices.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import type { CalledBy } from '../store/journal/journal-record.ts';
import type { LoadedRun } from '../store/store.ts';

/** The states a list filters by, in the words a person looks for. */
export const RUN_CATEGORIES = ['running', 'waiting', 'paused', 'failed', 'stopped', 'cancelled', 'done', 'unreadable'] as const;
export type RunCategory = (typeof RUN_CATEGORIES)[number];

/** What a run waits for, as data (the summary's waitsFor says it in words). */
export type RunWaitingOn =
  /** A call of its open turn: a person's decision, a wait's time or event, a sub-agent run it queued. */
  | { kind: 'call'; toolUseId: string; name: string | null; needs: DecisionNeed | null; since: number | null }
  /** The sub-agent runs its calls queued in the fleet, which have not ended. */
  | { kind: 'runs'; runIds: string[] }
  /** A fleet worker that has the run's agent (at the version it started with). */
  | { kind: 'agent'; agent: string };

type WaitedCall = Extract<RunWaitingOn, { kind: 'call' }>;

/** The agent definition that drives a run (defineAgent), or 'demo' for the lesson's demo; version null where none is pinned. */
export interface RunAgent {
  name: string;
  version: string | null;
}

export interface RunSummary {
  runId: string;
  /** Where it lives: a folder of runs (a journal file) or the fleet's database. */
  source: 'folder' | 'fleet';
  /** Its journal, or the database in words. */
  location: string;
  /** The state the run rests in ('awaitingDecision': it waits); null when its journal cannot be read. */
  state: AgentStateName | null;
  category: RunCategory;
  task: string;
  turn: number;
  /** Its MAX_TURNS; null where it is not known (unreadable, or a fleet run that leaves it to the agent). */
  maxTurns: number | null;
  /** Tokens spent so far; null where they are not known (a fleet run that has not replied yet). */
  usage: TokenUsage | null;
  /** Input, output and cache tokens together; null where the usage is not known. */
  tokens: number | null;
  /** US dollars at list prices (counted under a cost budget, else estimated); null without a price. */
  costUsd: number | null;
  /** Epoch milliseconds of its last record. */
  updatedAt: number | null;
  /** What it waits for, in words ("toolu_01 write_report: approval"); null when it waits for nothing. */
  waitsFor: string | null;
  /** The same as data. */
  waitingOn: RunWaitingOn | null;
  /** What drives it: its agent's name and version; null for a run started from parts (a model and tools). */
  agent: RunAgent | null;
  /** The tool it waits on, else the tool it called last; null before its first call (or where it is not known). */
  tool: string | null;
  /** Who paused it (it stays where it is until unpaused), else null. */
  pausedBy: string | null;
  /** The run it was forked from, if it was. */
  parent: string | null;
  /** For a sub-agent's child run: the run and call that started it. */
  calledBy: CalledBy | null;
  /** Whose the run is (core/tenant.ts): 'default' for a run started without one. */
  tenant: string;
  /**
   * How many runs of the same store its sub-agent calls started (their current runs); null where
   * the runs are not read together (the console reads a folder at a time).
   */
  children: number | null;
  /** Moved aside (archive/) when a new run started in its folder, or by --fresh. */
  archived: boolean;
  /** Why the journal cannot be read, when it cannot. */
  problem: string | null;
}

export function categoryOf(state: AgentStateName, paused: boolean): RunCategory {
  switch (state) {
    case 'done':
      return 'done';
    case 'failed':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
    case 'stoppedAtMaxTurns':
    case 'stoppedAtBudget':
      return 'stopped';
    default:
      if (paused) return 'paused';
      return state === 'awaitingDecision' ? 'waiting' : 'running';
  }
}

export interface JournalPlace {
  /** The journal's path (what list prints), or the folder a console row names. */
  location: string;
  archived: boolean;
  pausedBy: string | null;
}

/** A run of a folder, from its journal (from its last snapshot on is enough). */
export function summaryOfJournal(loaded: LoadedRun, place: JournalPlace): RunSummary {
  const { state, context } = foldJournal(place.location, loaded);
  const counted = typeof context.costUsd === 'number' ? context.costUsd : null;
  const model = loaded.header.startedBy?.model;
  const waitingOn = callWaitedOn(context);
  return {
    runId: loaded.header.runId,
    source: 'folder',
    location: place.location,
    state,
    category: categoryOf(state, place.pausedBy !== null),
    task: context.task,
    turn: context.turn,
    maxTurns: context.maxTurns,
    usage: context.usage,
    tokens: totalTokens(context.usage),
    costUsd: counted ?? (model ? estimateCost(model, context.usage) : null),
    updatedAt: loaded.records[loaded.records.length - 1]!.record.at,
    waitsFor: waitingOn ? callWords(waitingOn, context) : null,
    waitingOn,
    agent: agentOf(loaded),
    tool: waitingOn?.name ?? lastToolOf(context),
    pausedBy: place.pausedBy,
    parent: loaded.header.forkedFrom?.runId ?? null,
    calledBy: loaded.header.calledBy ?? null,
    tenant: tenantOf(loaded.header),
    children: null,
    archived: place.archived,
    problem: null,
  };
}

/** A run whose journal cannot be read: listed with its problem, never skipped. */
export function unreadableSummary(runId: string, place: Omit<JournalPlace, 'pausedBy'>, problem: string): RunSummary {
  return {
    runId,
    source: 'folder',
    location: place.location,
    state: null,
    category: 'unreadable',
    task: '',
    turn: 0,
    maxTurns: null,
    usage: null,
    tokens: null,
    costUsd: null,
    updatedAt: null,
    waitsFor: null,
    waitingOn: null,
    agent: null,
    tool: null,
    pausedBy: null,
    parent: null,
    calledBy: null,
    // Whose it is cannot be read with the rest: listed under the default tenant's, and so under no other tenant's filter.
    tenant: DEFAULT_TENANT,
    children: null,
    archived: place.archived,
    problem,
  };
}

/** Each summary's count of the runs of the list its calls started (a child is counted by its current run only; an archived run has none). */
export function withChildren<T extends RunSummary>(summaries: T[]): T[] {
  const counts = new Map<string, number>();
  for (const summary of summaries) {
    if (summary.calledBy && !summary.archived) counts.set(summary.calledBy.runId, (counts.get(summary.calledBy.runId) ?? 0) + 1);
  }
  for (const summary of summaries) summary.children = summary.archived ? 0 : (counts.get(summary.runId) ?? 0);
  return summaries;
}

/** The agent pinned in the header; the demo's runs are the demo's, as a fleet names them. */
function agentOf(loaded: LoadedRun): RunAgent | null {
  const pinned = loaded.header.agent;
  if (pinned) return { name: pinned.name, version: pinned.version };
  return loaded.header.startedBy?.command === 'demo' ? { name: 'demo', version: null } : null;
}

/** The call in flight, else the last tool_use of the conversation (read from its end: a turn or two back). */
function lastToolOf(context: AgentContext): string | null {
  const open = context.pending[context.pending.length - 1];
  if (open) return open.name;
  for (let m = context.messages.length - 1; m >= 0; m--) {
    const { role, content } = context.messages[m]!;
    if (role !== 'assistant' || typeof content === 'string') continue;
    for (let b = content.length - 1; b >= 0; b--) {
      const block = content[b]!;
      // A server tool's call (web search…) is a call the run made as much as its own tools'.
      if ((block.type === 'tool_use' || block.type === 'server_tool_use') && typeof block.name === 'string') return block.name;
    }
  }
  return null;
}

/** What a run waits on, as data and in words, from its state (a call of its open turn); null when it waits on none. */
export function waitingOfContext(context: AgentContext): { waitingOn: WaitedCall; waitsFor: string } | null {
  const waitingOn = callWaitedOn(context);
  return waitingOn ? { waitingOn, waitsFor: callWords(waitingOn, context) } : null;
}

function callWaitedOn(context: AgentContext): WaitedCall | null {
  const awaiting = context.awaiting;
  if (!awaiting) return null;
  const call = context.pending.find((pending) => pending.id === awaiting.tool_use_id);
  return { kind: 'call', toolUseId: awaiting.tool_use_id, name: call?.name ?? null, needs: call?.needs ?? null, since: awaiting.since };
}

/** The call the run waits on and what for: "toolu_01 write_report: approval", "toolu_02 wait: event deploy-done (until …)". */
function callWords(waiting: WaitedCall, context: AgentContext): string {
  const call = context.pending.find((pending) => pending.id === waiting.toolUseId);
  if (!call?.needs) return waiting.toolUseId;
  return `${call.id} ${call.name}: ${waitsForWords({ needs: call.needs, input: call.input, since: waiting.since })}`;
}
