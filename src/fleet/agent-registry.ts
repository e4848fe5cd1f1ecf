/**
 * Which agents the fleet's workers drive: each worker registers its definitions (name and
 * version) when it starts, so that a run waiting for an agent, or a version, that no worker has
 * is said to (status, list), and a submit for an agent no worker ever registered is caught.
 */
import type { Pool } from 'pg';
import { type AgentDefinition, acceptedVersions } from '../agent/agent-definition.ts';
import type { ClaimCondition } from '../store/pg/leases.ts';

/**
 * What a worker's claim takes: demo runs when it drives the demo, and runs of its agents that
 * were not started yet or were started at a version the worker's definition accepts.
 */
export function drivableRuns(demo: boolean, agents: readonly AgentDefinition[]): ClaimCondition {
  return {
    where: (first) => `((da_runs.spec ->> 'kind' = 'demo' AND $${first}::boolean)
      OR (da_runs.spec ->> 'kind' = 'agent' AND da_runs.spec ->> 'agent' = ANY($${first + 1}::text[])
          AND (da_runs.header #>> '{agent,version}' IS NULL
               OR (da_runs.header #>> '{agent,name}') || '@' || (da_runs.header #>> '{agent,version}') = ANY($${first + 2}::text[]))))`,
    params: [demo, agents.map((agent) => agent.name), agents.flatMap((agent) => acceptedVersions(agent).map((version) => `${agent.name}@${version}`))],
  };
}

export async function registerAgents(pool: Pool, agents: readonly AgentDefinition[], worker: string): Promise<void> {
  if (agents.length === 0) return;
  await pool.query(
    `INSERT INTO da_agents (name, version, last_worker)
     SELECT name, version, $3 FROM unnest($1::text[], $2::text[]) AS given (name, version)
     ON CONFLICT (name, version) DO UPDATE SET last_seen = now(), last_worker = EXCLUDED.last_worker`,
    [agents.map((agent) => agent.name), agents.map((agent) => agent.version), worker],
  );
}

/** Whether any worker ever registered an agent of this name. */
export async function agentRegistered(pool: Pool, name: string): Promise<boolean> {
  const { rowCount } = await pool.query('SELECT 1 FROM da_agents WHERE name = $1 LIMIT 1', [name]);
  return rowCount !== 0;
}
