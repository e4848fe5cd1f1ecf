/**
 * da_agents: the agents (name and version) the fleet's workers have registered, and the claim
 * condition that keeps a worker to the runs it can drive. Which versions a definition accepts is
 * the fleet's to say (src/fleet/agent-registry.ts); here are only the statements.
 */
import type { ClaimCondition } from './leases.ts';
import type { Database } from './pool.ts';

/**
 * Demo runs when `demo`, and runs of the agents named that were not started yet or were started
 * at one of `accepted` ("name@version"): what a worker's claim takes.
 */
export function drivableRunsCondition(demo: boolean, names: readonly string[], accepted: readonly string[]): ClaimCondition {
  return {
    where: (first) => `((da_runs.spec ->> 'kind' = 'demo' AND $${first}::boolean)
      OR (da_runs.spec ->> 'kind' = 'agent' AND da_runs.spec ->> 'agent' = ANY($${first + 1}::text[])
          AND (da_runs.header #>> '{agent,version}' IS NULL
               OR (da_runs.header #>> '{agent,name}') || '@' || (da_runs.header #>> '{agent,version}') = ANY($${first + 2}::text[]))))`,
    params: [demo, names, accepted],
  };
}

/** Registers (name, version) pairs for a worker, in one statement; one seen before gets its last_seen and worker anew. */
export async function upsertAgentVersions(db: Database, names: readonly string[], versions: readonly string[], worker: string): Promise<void> {
  await db.query(
    `INSERT INTO da_agents (name, version, last_worker)
     SELECT name, version, $3 FROM unnest($1::text[], $2::text[]) AS given (name, version)
     ON CONFLICT (name, version) DO UPDATE SET last_seen = now(), last_worker = EXCLUDED.last_worker`,
    [names, versions, worker],
  );
}

/** Whether any worker ever registered an agent of this name. */
export async function agentNameRegistered(db: Database, name: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM da_agents WHERE name = $1 LIMIT 1', [name]);
  return rowCount !== 0;
}
