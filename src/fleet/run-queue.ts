/** The queue of runs in PostgreSQL: submitting runs and listing where they stand. */
import { randomUUID } from 'node:crypto';
import type { Budget } from '../../machines/agent-loop.types.ts';
import type { ClearToolUsesOptions } from '../compaction/clear-tool-uses.ts';
import type { CompactionOptions } from '../compaction/compaction-settings.ts';
import type { ClaimCondition } from '../store/pg/leases.ts';
import { ensureDemoTables } from '../store/pg/demo-tables.ts';
import type { Database } from '../store/pg/pool.ts';
import { countFinishedRuns, countUnfinishedByState, countUnfinishedRuns, insertQueuedRuns, type QueueQuery, type QueueRow, readQueueRows, runTenant } from '../store/pg/queue.ts';

export type { QueueQuery } from '../store/pg/queue.ts';
import { isStoppedAtLimit, type AgentStateName } from '../../machines/agent-loop.types.ts';
import { type RaiseRequest, raiseProblem } from './raise-run.ts';

/** What a worker needs to drive a run: the lesson's demo, or a task for an agent a worker has registered. */
export type RunSpec = DemoRunSpec | AgentRunSpec;

/** A run of the lesson's demo: which model, how paced. */
export interface DemoRunSpec {
  kind: 'demo';
  /** A Claude model name; null for the scripted demo model. */
  model: string | null;
  maxTurns: number;
  paceMs: number;
  jitterMs: number;
  /** submit --require-approval: pinned in the run's header when a worker starts it (absent: none). */
  requireApproval?: string[] | 'side-effects';
  /** submit --decision-timeout, in milliseconds (absent: none). */
  decisionTimeoutMs?: number;
  /** submit --max-cost-usd, --max-total-tokens: each run's budget, kept in its journal when a worker starts it. */
  budget?: Budget;
  /** submit --compact, --context-window, --compact-trigger: pinned in the run's header when a worker starts it. */
  compaction?: CompactionOptions;
  /** submit --clear-tool-uses and --clear-*: pinned in the run's header when a worker starts it. */
  clearToolUses?: ClearToolUsesOptions;
}

/**
 * A task for an agent (defineAgent) by its name: a worker that has the agent takes it up, and
 * the version it starts it with is pinned in the run's header. The policies given here are the
 * run's own, over the agent's (pinned the same way).
 */
export interface AgentRunSpec {
  kind: 'agent';
  agent: string;
  task: string;
  maxTurns?: number;
  requireApproval?: string[] | 'side-effects';
  decisionTimeoutMs?: number;
  budget?: Budget;
  /** The run and call that queued it (a sub-agent's child). */
  calledBy?: { runId: string; toolUseId: string };
  /** The W3C traceparent its trace hangs under (the queueing call's execute_tool span). */
  traceParent?: string;
  /** The schedule whose tick started it, and the tick (an ISO time). */
  schedule?: { name: string; tick: string };
  /** Whose the run is, when not the default tenant's (core/tenant.ts). */
  tenant?: string;
}

export interface QueuedRun {
  id: string;
  state: string;
  turn: number;
  records: number;
  /** Ended: done, failed or cancelled. A run stopped at a limit is not: it is stopped, resumable (see stoppedAtLimit). */
  finished: boolean;
  /** Stopped at its MAX_TURNS or its budget: no worker takes it up until `durable-agent raise` gives it more. */
  stoppedAtLimit: boolean;
  /** The raise waiting for a worker to take the run up with it, else null. */
  raise: RaiseRequest | null;
  spec: RunSpec;
  /** The agent that drives it ('demo' for the lesson's demo). */
  agent: string;
  /** The version of the agent the run was started with (pinned in its header); null until a worker starts it, and for the demo. */
  agentVersion: string | null;
  /**
   * For a run no worker may take up because none has registered its agent (at the version it
   * needs): what it waits for, in words; else null.
   */
  waitsForAgent: string | null;
  worker: string | null;
  leaseEpoch: number;
  leaseExpiresAt: string | null;
  leaseActive: boolean;
  /** The call the run waits for a person's decision on (state awaitingDecision), else null. */
  awaiting: string | null;
  /** When that call is a wait (da_waits): its event and its time, else null. */
  awaitingWake: { event: string | null; wakeAt: string | null } | null;
  awaitingSince: string | null;
  /** A decision for the awaited call is there: a worker takes the run up. */
  decisionGiven: boolean;
  /** The runs its sub-agent calls queued that have not ended, which it waits for without a worker (no claim takes it meanwhile); [] for none. */
  waitsForRuns: string[];
  /** Who paused the run (no worker claims it until `unpause --run`), else null. */
  pausedBy: string | null;
  /** Who asked to cancel it, while the cancel is not yet applied, else null. */
  cancelAskedBy: string | null;
  createdAt: string;
  updatedAt: string;
  /** A run made by fork: the fleet run it was forked from and at which record; else null. */
  forkedFrom: { run: string | null; seq: number } | null;
  /** The runs its sub-agent calls queued, archived ones not counted. */
  children: number;
}

export async function submitRuns(pool: Database, spec: DemoRunSpec, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  // The demo's tables come with its first runs, so that what its tools did can be read before any of them wrote.
  await ensureDemoTables(pool);
  await insertQueuedRuns(pool, ids, spec);
  return ids;
}

/** The rows of da_runs a query asks for (default: every one) as the fleet reads them (fleet-summary.ts makes each a RunSummary). */
export async function listQueuedRuns(pool: Database, query: QueueQuery = {}): Promise<QueuedRun[]> {
  return (await readQueueRows(pool, query)).map((row) => queuedRun(row, row.spec as RunSpec));
}

/** A row of the queue as the fleet says it: its spec read as a RunSpec, what it waits for in words. */
function queuedRun(row: QueueRow, spec: RunSpec): QueuedRun {
  return {
    id: row.id,
    state: row.state,
    turn: row.turn,
    records: row.records,
    finished: row.finished,
    stoppedAtLimit: isStoppedAtLimit(row.state as AgentStateName),
    raise: row.raise !== null && raiseProblem(row.raise) === null ? (row.raise as RaiseRequest) : null,
    spec,
    agent: spec.kind === 'agent' ? spec.agent : 'demo',
    agentVersion: row.agent_version,
    waitsForAgent: row.finished ? null : waitsForAgent(spec, row.agent_version, row.agent_known, row.version_known, row.registered ?? []),
    worker: row.lease_owner,
    leaseEpoch: Number(row.lease_epoch),
    leaseExpiresAt: row.lease_expires_at?.toISOString() ?? null,
    leaseActive: row.lease_active,
    awaiting: row.awaiting,
    awaitingSince: row.awaiting_since?.toISOString() ?? null,
    awaitingWake: row.is_wait ? { event: row.wait_event, wakeAt: row.wait_wake_at?.toISOString() ?? null } : null,
    decisionGiven: row.awaiting !== null && row.decision_given,
    waitsForRuns: row.waits_for_runs ?? [],
    pausedBy: row.paused_by,
    cancelAskedBy: row.cancel_asked_by,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    forkedFrom: row.forked_from ? { run: row.forked_from.fleetRun ?? null, seq: row.forked_from.seq } : null,
    children: row.children,
  };
}

/**
 * What a run of an agent waits for when no worker has registered the agent, or the version the
 * run started with. A worker whose definition declares that version compatible takes the run
 * up all the same: the words say what was registered, not what a worker accepts.
 */
function waitsForAgent(spec: RunSpec, version: string | null, agentKnown: boolean, versionKnown: boolean, registered: readonly string[]): string | null {
  if (spec.kind !== 'agent') return null;
  if (!agentKnown) return `a worker with the agent ${spec.agent}: no worker has registered it (durable-agent worker --agents FILE)`;
  if (version !== null && !versionKnown) return `a worker with ${spec.agent} at version ${version}, which it started with (registered: ${registered.join(', ')})`;
  return null;
}

/**
 * Unfinished runs a worker has, or will have, something to do for: a run that waits for a person
 * counts only while a worker drives it or once its decision is there (or its deadline passed).
 */
export async function unfinishedRunCount(pool: Database, only?: ClaimCondition): Promise<number> {
  return countUnfinishedRuns(pool, only);
}

/** How many runs rest in each state: the finished ones from the counts kept as they finish, the unfinished ones counted, paused or not. */
/** Whose a run of the fleet is, or null when the fleet has no such run. */
export function fleetRunTenant(pool: Database, runId: string): Promise<string | null> {
  return runTenant(pool, runId);
}

export async function countRunsByState(pool: Database, tenant?: string): Promise<{ finished: Map<string, number>; unfinished: Array<{ state: string; paused: boolean; runs: number }> }> {
  const [finished, unfinished] = await Promise.all([countFinishedRuns(pool, tenant), countUnfinishedByState(pool, tenant)]);
  return { finished, unfinished };
}
