/**
 * The fleet's runs as run summaries: each row of da_runs (run-queue.ts reads them) mapped to a
 * RunSummary in one function, with its tokens and cost beside it, read from each run's latest
 * record that carries its usage (run-usage.ts). The row itself stays with it: what only a fleet
 * has (the lease, the worker, the raise, the records) is shown by the fleet's own status.
 */
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import type { AgentStateName, TokenUsage } from '../../machines/agent-loop.types.ts';
import { awaitedRunsWords } from '../awaits/wait-words.ts';
import { DEFAULT_TENANT } from '../core/tenant.ts';
import { DEMO_TASK } from '../demo/demo-task.ts';
import { estimateCost } from '../model/prices.ts';
import { categoryOf, type RunSummary, type RunWaitingOn } from '../runtime/run-summary.ts';
import type { Database } from '../store/pg/pool.ts';
import type { QueueQuery } from '../store/pg/queue.ts';
import { readLatestCalls } from '../store/pg/run-latest-calls.ts';
import { readLatestUsage } from '../store/pg/run-usage.ts';
import { storedUsage } from '../store/journal/record-shape.ts';
import type { KeysGiven } from '../seal/keys.ts';
import { listQueuedRuns, type QueuedRun } from './run-queue.ts';
import { keysReader, shownFleetTasks } from './sealed-tasks.ts';

/** Where a fleet run lives, in words. */
export const FLEET_LOCATION = 'the fleet (PostgreSQL)';

/** A fleet run: its summary, and its row of the queue as the fleet's status shows it. */
export interface FleetRunSummary extends RunSummary {
  source: 'fleet';
  fleet: QueuedRun;
}

export interface SpentSoFar {
  usage: TokenUsage;
  /** Counted under a cost budget; null: estimate it from the model's price. */
  costUsd: number | null;
  model: string | null;
}

/**
 * The runs of da_runs a query asks for (default: every one, in the queue's order), each with what
 * it spent and the calls of its latest turn that used tools, read for those runs only. A task
 * submitted sealed is opened with `keys`, else named with the master key it needs (sealed-tasks.ts),
 * in the summary and in its row alike: no view made from a summary hands out a sealed string.
 */
export async function listFleetRuns(pool: Database, query: QueueQuery = {}, keys?: KeysGiven): Promise<FleetRunSummary[]> {
  const runs = await listQueuedRuns(pool, query);
  const ids = runs.map((run) => run.id);
  const [usage, calls, tasks] = await Promise.all([
    usageOf(pool, ids),
    callsOf(pool, ids),
    shownFleetTasks(pool, runs.map((run) => ({ runId: run.id, task: run.spec.kind === 'agent' ? run.spec.task : null })), keysReader(keys)),
  ]);
  return runs.map((run) => summaryOfQueuedRun(withTaskShown(run, tasks.get(run.id)), usage.get(run.id) ?? null, calls.get(run.id) ?? []));
}

function withTaskShown(run: QueuedRun, task: string | undefined): QueuedRun {
  return task === undefined || run.spec.kind !== 'agent' ? run : { ...run, spec: { ...run.spec, task } };
}

/** A call of a run's latest turn that used tools. */
export interface LatestCall {
  id: string;
  name: string;
}

export function summaryOfQueuedRun(run: QueuedRun, spent: SpentSoFar | null, latestCalls: readonly LatestCall[]): FleetRunSummary {
  const state = run.state as AgentStateName;
  const waitingOn = waitingOnOf(run);
  return {
    runId: run.id,
    source: 'fleet',
    location: FLEET_LOCATION,
    state,
    category: categoryOf(state, run.pausedBy !== null),
    task: run.spec.kind === 'agent' ? run.spec.task : DEMO_TASK,
    turn: run.turn,
    maxTurns: run.spec.maxTurns ?? null,
    usage: spent?.usage ?? null,
    tokens: spent ? totalTokens(spent.usage) : null,
    costUsd: spent ? (spent.costUsd ?? (spent.model ? estimateCost(spent.model, spent.usage) : null)) : null,
    updatedAt: Date.parse(run.updatedAt),
    // A run that waits for its children waits in awaitingDecision too: the runs say more than the call.
    waitsFor: (run.waitsForRuns.length ? awaitedRunsWords(run.waitsForRuns) : null) ?? awaitedWords(run) ?? run.waitsForAgent,
    waitingOn,
    agent: { name: run.agent, version: run.agentVersion },
    // The call it waits on is one of its latest turn's; else that turn's last call is the last it made.
    tool: (latestCalls.find((call) => call.id === run.awaiting) ?? latestCalls[latestCalls.length - 1])?.name ?? null,
    pausedBy: run.pausedBy,
    parent: run.forkedFrom?.run ?? null,
    calledBy: run.spec.kind === 'agent' ? (run.spec.calledBy ?? null) : null,
    tenant: run.spec.kind === 'agent' ? (run.spec.tenant ?? DEFAULT_TENANT) : DEFAULT_TENANT,
    children: run.children,
    archived: false,
    problem: null,
    fleet: run,
  };
}

function waitingOnOf(run: QueuedRun): RunWaitingOn | null {
  if (run.waitsForRuns.length) return { kind: 'runs', runIds: run.waitsForRuns };
  if (run.awaiting !== null) {
    return { kind: 'call', toolUseId: run.awaiting, name: null, needs: run.awaitingWake ? 'wait' : null, since: run.awaitingSince ? Date.parse(run.awaitingSince) : null };
  }
  return run.waitsForAgent !== null ? { kind: 'agent', agent: run.agent } : null;
}

async function usageOf(pool: Database, ids: readonly string[]): Promise<Map<string, SpentSoFar>> {
  const rows = await readLatestUsage(pool, ids);
  return new Map(rows.map((row) => [row.id, { usage: storedUsage(row.usage), costUsd: typeof row.cost_usd === 'number' ? row.cost_usd : null, model: row.model }]));
}

async function callsOf(pool: Database, ids: readonly string[]): Promise<Map<string, LatestCall[]>> {
  const rows = await readLatestCalls(pool, ids);
  return new Map(rows.map((row) => [row.id, Array.isArray(row.pending) ? row.pending.filter(isCall) : []]));
}

function isCall(value: unknown): value is LatestCall {
  return typeof value === 'object' && value !== null && typeof (value as LatestCall).id === 'string' && typeof (value as LatestCall).name === 'string';
}

/** The call the run waits on, and for a wait its event or its time (what da_waits knows of it). */
function awaitedWords(run: QueuedRun): string | null {
  if (run.awaiting === null) return null;
  const wake = run.awaitingWake;
  if (!wake) return run.awaiting;
  const until = wake.wakeAt ? `until ${wake.wakeAt}` : null;
  return `${run.awaiting} wait: ${wake.event ? `event ${wake.event}${until ? ` (${until} at the latest)` : ''}` : (until ?? 'its time')}`;
}
