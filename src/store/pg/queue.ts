/**
 * The queue of runs in da_runs: queueing runs, reading a run's spec, reading where every run
 * stands, and counting what is left for the workers. What the rows mean is the fleet's
 * (src/fleet/run-queue.ts); here are only the statements.
 */
import { type ClaimCondition, STOPPED_AT_LIMIT, WORKABLE } from './leases.ts';
import type { Database } from './pool.ts';

/** Queues runs of one spec; created_at by the clock at the insert, so that the claim takes them in that order. */
export async function insertQueuedRuns(db: Database, ids: readonly string[], spec: unknown): Promise<void> {
  await db.query(
    `INSERT INTO da_runs (id, spec, created_at)
     SELECT id, $2::jsonb, clock_timestamp() FROM unnest($1::text[]) AS id`,
    [ids, JSON.stringify(spec)],
  );
}

/** Queues one run under its id; false when a run of that id exists already (nothing is written then). */
export async function insertQueuedRun(db: Database, runId: string, spec: unknown): Promise<boolean> {
  const { rowCount } = await db.query(`INSERT INTO da_runs (id, spec, created_at) VALUES ($1, $2::jsonb, clock_timestamp()) ON CONFLICT (id) DO NOTHING`, [runId, JSON.stringify(spec)]);
  return rowCount === 1;
}

/** The spec a run was queued with; undefined when there is no such run (never queued, or pruned). */
export async function readRunSpec(db: Database, runId: string): Promise<unknown> {
  const { rows } = await db.query<{ spec: unknown }>('SELECT spec FROM da_runs WHERE id = $1', [runId]);
  return rows[0]?.spec;
}

/** A run of the queue as listRuns reads it: the row, what it waits for, who holds it, what was asked of it. */
export interface QueueRow {
  id: string;
  state: string;
  turn: number;
  records: number;
  finished: boolean;
  spec: unknown;
  lease_owner: string | null;
  lease_epoch: string;
  lease_expires_at: Date | null;
  lease_active: boolean;
  awaiting: string | null;
  awaiting_since: Date | null;
  wait_event: string | null;
  wait_wake_at: Date | null;
  is_wait: boolean;
  decision_given: boolean;
  paused_by: string | null;
  cancel_asked_by: string | null;
  raise: unknown;
  created_at: Date;
  updated_at: Date;
  forked_from: { fleetRun?: string; seq: number } | null;
  agent_version: string | null;
  agent_known: boolean;
  version_known: boolean;
  registered: string[] | null;
  waits_for_runs: string[] | null;
}

/** Every run but the archived ones, oldest first, in one statement: the fleet's list, status and console read it. */
export async function readQueueRows(db: Database): Promise<QueueRow[]> {
  const { rows } = await db.query<QueueRow>(
    `SELECT id, state, turn, records, finished, spec, lease_owner, lease_epoch, lease_expires_at,
            coalesce(lease_expires_at > now(), false) AS lease_active,
            CASE WHEN state = 'awaitingDecision' THEN awaiting END AS awaiting,
            CASE WHEN state = 'awaitingDecision' THEN awaiting_since END AS awaiting_since,
            w.tool_use_id IS NOT NULL AS is_wait, w.event AS wait_event, w.wake_at AS wait_wake_at,
            EXISTS (SELECT 1 FROM da_decisions d WHERE d.run_id = da_runs.id AND d.tool_use_id = da_runs.awaiting AND d.settled_at IS NULL) AS decision_given,
            (SELECT c.request ->> 'by' FROM da_controls c WHERE c.run_id = da_runs.id AND c.kind = 'pause') AS paused_by,
            (SELECT c.request ->> 'by' FROM da_controls c WHERE c.run_id = da_runs.id AND c.kind = 'cancel') AS cancel_asked_by,
            (SELECT c.request FROM da_controls c WHERE c.run_id = da_runs.id AND c.kind = 'raise') AS raise,
            created_at, updated_at, header -> 'forkedFrom' AS forked_from,
            header #>> '{agent,version}' AS agent_version,
            EXISTS (SELECT 1 FROM da_agents a WHERE a.name = spec ->> 'agent') AS agent_known,
            EXISTS (SELECT 1 FROM da_agents a WHERE a.name = spec ->> 'agent' AND a.version = header #>> '{agent,version}') AS version_known,
            (SELECT array_agg(a.version ORDER BY a.last_seen DESC) FROM da_agents a WHERE a.name = spec ->> 'agent') AS registered,
            (SELECT array_agg(cw.child_run_id ORDER BY cw.child_run_id) FROM da_child_waits cw LEFT JOIN da_runs child ON child.id = cw.child_run_id
              WHERE cw.run_id = da_runs.id AND NOT da_runs.finished AND (cw.give_up_at IS NULL OR cw.give_up_at > now())
                AND (child.id IS NULL OR (NOT child.finished AND child.state NOT IN (${STOPPED_AT_LIMIT})))) AS waits_for_runs
       FROM da_runs LEFT JOIN da_waits w ON w.run_id = da_runs.id AND w.tool_use_id = da_runs.awaiting AND da_runs.state = 'awaitingDecision'
      WHERE id NOT LIKE '%~archived~%' ORDER BY created_at, id`,
  );
  return rows;
}

/**
 * Unfinished runs a worker has, or will have, something to do for: a run that waits for a person
 * counts only while a worker drives it or once its decision is there (or its deadline passed).
 */
export async function countUnfinishedRuns(db: Database, only?: ClaimCondition): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM da_runs WHERE NOT finished AND (lease_expires_at > now() OR ${WORKABLE})${only ? ` AND ${only.where(1)}` : ''}`,
    only ? [...only.params] : [],
  );
  return Number(rows[0]?.n ?? 0);
}
