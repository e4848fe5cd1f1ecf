/**
 * Which agents the fleet's workers drive: each worker registers its definitions (name and
 * version) when it starts, so that a run waiting for an agent, or a version, that no worker has
 * is said to (status, list), and a submit for an agent no worker ever registered is caught.
 */
import { type AgentDefinition, acceptedVersions } from '../agent/agent-definition.ts';
import { agentNameRegistered, drivableRunsCondition, upsertAgentVersions } from '../store/pg/agents.ts';
import type { ClaimCondition } from '../store/pg/leases.ts';
import type { Database } from '../store/pg/pool.ts';

/**
 * What a worker's claim takes: demo runs when it drives the demo, and runs of its agents that
 * were not started yet or were started at a version the worker's definition accepts.
 */
export function drivableRuns(demo: boolean, agents: readonly AgentDefinition[]): ClaimCondition {
  return drivableRunsCondition(
    demo,
    agents.map((agent) => agent.name),
    agents.flatMap((agent) => acceptedVersions(agent).map((version) => `${agent.name}@${version}`)),
  );
}

export async function registerAgents(pool: Database, agents: readonly AgentDefinition[], worker: string): Promise<void> {
  if (agents.length === 0) return;
  await upsertAgentVersions(pool, agents.map((agent) => agent.name), agents.map((agent) => agent.version), worker);
}

/** Whether any worker ever registered an agent of this name. */
export async function agentRegistered(pool: Database, name: string): Promise<boolean> {
  return agentNameRegistered(pool, name);
}
