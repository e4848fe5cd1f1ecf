/**
 * Queueing a task for an agent, by the run's id: a submit with an id that exists creates
 * nothing and answers with that run (a client's retry never queues two), and one whose stored
 * run was submitted with another task, agent or policies is refused with what differs.
 */
import { randomUUID } from 'node:crypto';
import type { Budget } from '../../machines/agent-loop.types.ts';
import { type AgentDefinition, isAgentDefinition } from '../agent/agent-definition.ts';
import { checkDecisionPolicy } from '../awaits/needs-decision.ts';
import { RunIdTakenError } from '../runtime/attach-run.ts';
import type { Database } from '../store/pg/pool.ts';
import { insertQueuedRun, readRunSpec } from '../store/pg/queue.ts';
import { openFleetSpec } from '../store/pg/pg-run-keys.ts';
import type { KeysGiven, MasterKeys } from '../seal/keys.ts';
import { sealSubmittedSpec } from '../seal/spec-content.ts';
import { checkRunId } from '../store/run-id.ts';
import { pinnedTenant } from '../core/tenant.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { agentRegistered } from './agent-registry.ts';
import type { AgentRunSpec } from './run-queue.ts';

export interface SubmitRunOptions {
  /** The agent, by its definition or its name. */
  agent: AgentDefinition | string;
  task: string;
  /** The run's id (1 to 128 letters, digits, ".", "_" or "-"); default: a new random one. */
  runId?: string | undefined;
  /** The run's own limits and rule for decisions, over the agent's; pinned when a worker starts it. */
  maxTurns?: number | undefined;
  requireApproval?: string[] | 'side-effects' | undefined;
  decisionTimeoutMs?: number | undefined;
  budget?: Budget | undefined;
  /** The run and call that queued it (a sub-agent's child): kept in its header when a worker starts it. */
  calledBy?: { runId: string; toolUseId: string } | undefined;
  /** Whose the run is (core/tenant.ts): pinned in its header when a worker starts it. Default: the default tenant's. */
  tenant?: string | undefined;
  /** The W3C traceparent of the span the run's trace hangs under (a sub-agent call's execute_tool span). Not part of what the run is: a second submit with another one is the same run. */
  traceParent?: string | undefined;
  /**
   * Queue it although no worker ever registered an agent of that name (a worker that will, not
   * yet started). Without it such a submit is refused (UnknownAgentError): a misspelt name would
   * otherwise queue a run no worker ever takes up.
   */
  allowUnknownAgent?: boolean | undefined;
  /**
   * The master keys the user holds: the run is sealed, its task waits in the queue sealed under
   * a run key of its own (kept wrapped in the run's row), and a worker needs these keys to start
   * it. A retry with the same task needs them too, to compare.
   */
  keys?: KeysGiven | undefined;
}

export interface SubmittedRun {
  runId: string;
  /** False: a run of that id was already queued with the same task, agent and policies; nothing was created. */
  created: boolean;
  spec: AgentRunSpec;
}

export class UnknownAgentError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'UnknownAgentError';
  constructor(readonly agent: string) {
    super(
      `No worker of this fleet has registered an agent named ${JSON.stringify(agent)}, so no worker would take the run up. Nothing was queued. ` +
        'Check the name (status lists what the workers drive), start a worker that has it (durable-agent worker --agents FILE), or submit with allowUnknownAgent (--allow-unknown-agent) to queue it for one to come.',
    );
  }
}

export class SubmitRefusedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'SubmitRefusedError';
  constructor(readonly problem: string) {
    super(`The run cannot be submitted: ${problem}. Nothing was queued.`);
  }
}

async function keysOf(given: KeysGiven | undefined): Promise<MasterKeys | null> {
  if (given === undefined) return null;
  return typeof given === 'function' ? given() : given;
}

export async function submitRun(pool: Database, options: SubmitRunOptions): Promise<SubmittedRun> {
  const spec = agentRunSpecOf(options);
  const runId = options.runId === undefined ? randomUUID() : checkRunId(options.runId);
  // With the definition at hand, a rule that names a tool it lacks is refused here, not by every worker.
  if (isAgentDefinition(options.agent)) checkDecisionPolicy({ requireApproval: options.requireApproval, allowQuestions: false }, options.agent.tools);
  if (!options.allowUnknownAgent && !isAgentDefinition(options.agent) && !(await agentRegistered(pool, spec.agent))) throw new UnknownAgentError(spec.agent);
  const keys = await keysOf(options.keys);
  const sealed = keys ? await sealSubmittedSpec(spec, runId, keys) : null;
  if (await insertQueuedRun(pool, runId, sealed?.spec ?? spec, sealed?.wrapped ?? null)) return { runId, created: true, spec };
  const kept = (await readRunSpec(pool, runId)) as Record<string, unknown> | undefined;
  // Deleted (pruned) between the insert and this read: the retry is then a new submit.
  if (!kept) return submitRun(pool, options);
  const stored = await openFleetSpec(pool, runId, kept, async () => keys);
  const differences = specDifferences(stored, spec);
  if (differences.length > 0) throw new RunIdTakenError(runId, `the fleet (da_runs)`, differences);
  return { runId, created: false, spec };
}

/** The spec a run of an agent is queued with: its task and what it was given over the agent's own; SubmitRefusedError for a run that names no agent or no task. */
export function agentRunSpecOf(options: Omit<SubmitRunOptions, 'runId' | 'allowUnknownAgent'>): AgentRunSpec {
  const agent = isAgentDefinition(options.agent) ? options.agent.name : options.agent;
  if (typeof agent !== 'string' || agent === '') throw new SubmitRefusedError('it names no agent');
  if (typeof options.task !== 'string' || options.task.trim() === '') throw new SubmitRefusedError('its task is empty');
  return {
    kind: 'agent',
    agent,
    task: options.task,
    ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    ...(options.requireApproval !== undefined ? { requireApproval: options.requireApproval } : {}),
    ...(options.decisionTimeoutMs !== undefined ? { decisionTimeoutMs: options.decisionTimeoutMs } : {}),
    ...(options.budget !== undefined ? { budget: options.budget } : {}),
    ...(options.calledBy !== undefined ? { calledBy: { runId: options.calledBy.runId, toolUseId: options.calledBy.toolUseId } } : {}),
    ...(options.traceParent !== undefined ? { traceParent: options.traceParent } : {}),
    ...tenantField(options.tenant),
  };
}

/** A tenant other than the default one is kept in the spec; TenantError for a name that cannot be one. */
function tenantField(tenant: string | undefined): { tenant?: string } {
  const kept = pinnedTenant(tenant);
  return kept === undefined ? {} : { tenant: kept };
}

function specDifferences(stored: Record<string, unknown>, given: AgentRunSpec): string[] {
  const keys = new Set([...Object.keys(stored), ...Object.keys(given)]);
  const differences: string[] = [];
  for (const key of [...keys].sort()) {
    // Where its trace hangs is no part of what the run does: each take-up of the calling run traces its call anew.
    if (key === 'traceParent') continue;
    const before = JSON.stringify(stored[key] ?? null);
    const now = JSON.stringify((given as unknown as Record<string, unknown>)[key] ?? null);
    if (before !== now) differences.push(`${key}: stored ${shortened(before)}, given ${shortened(now)}`);
  }
  return differences;
}

function shortened(json: string): string {
  return json.length > 60 ? `${json.slice(0, 57)}…` : json;
}
