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

/**
 * Queues one run under its id, with its wrapped run key when it is submitted sealed; false when a
 * run of that id exists already (nothing is written then).
 */
export async function insertQueuedRun(db: Database, runId: string, spec: unknown, runKey: unknown = null): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO da_runs (id, spec, run_key, created_at) VALUES ($1, $2::jsonb, $3::jsonb, clock_timestamp()) ON CONFLICT (id) DO NOTHING`,
    [runId, JSON.stringify(spec), runKey === null ? null : JSON.stringify(runKey)],
  );
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
  /** The runs its calls queued (sub-agents' children), archived ones not counted. */
  children: number;
}

/**
 * Which runs readQueueRows reads: every run but the archived ones by default, in the queue's
 * order (oldest first). Each condition is one an index of da_runs answers (schema.ts, step 13),
 * so that a page of a million runs costs what a page of a thousand does.
 */
export interface QueueQuery {
  /** Only the runs resting in these states. */
  states?: readonly string[] | undefined;
  /** Only the unfinished runs (a stopped run is unfinished). */
  unfinished?: boolean | undefined;
  /**
   * 'queue': oldest first (created_at, id), the order the claim takes them in; 'newest': the
   * latest save first (updated_at descending, then id), the console's order.
   */
  order?: 'queue' | 'newest' | undefined;
  /** In the queue's order: the runs after this one (its id: the last run of the page before). */
  after?: string | undefined;
  /**
   * In the newest order: the runs after this place, a save's time in milliseconds (as a Date
   * holds it) and a run's id: older saves, or saves of that millisecond with a greater id.
   */
  olderThan?: { ms: number; id: string } | undefined;
  /** In the newest order: only the runs saved at this time (milliseconds) or later. */
  savedFrom?: number | undefined;
  /** Only the runs of this tenant (core/tenant.ts). */
  tenant?: string | undefined;
  /** Only the run of this id. */
  id?: string | undefined;
  /** At most this many. */
  limit?: number | undefined;
}

/** Whose a run of the fleet is (da_runs.tenant), or null when it is not there. */
export async function runTenant(db: Database, runId: string): Promise<string | null> {
  const { rows } = await db.query<{ tenant: string }>('SELECT tenant FROM da_runs WHERE id = $1', [runId]);
  return rows[0]?.tenant ?? null;
}

/** The run a cursor names is not in the fleet (pruned, or never there). */
export async function runExists(db: Database, runId: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM da_runs WHERE id = $1', [runId])).rowCount === 1;
}

/** The runs a query asks for, in one statement: the fleet's list, status and console read them. */
export async function readQueueRows(db: Database, query: QueueQuery = {}): Promise<QueueRow[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = ["da_runs.id NOT LIKE '%~archived~%'"];
  if (query.states) where.push(`da_runs.state = ANY(${param(query.states)}::text[])`);
  if (query.unfinished) where.push('NOT da_runs.finished');
  if (query.tenant !== undefined) where.push(`da_runs.tenant = ${param(query.tenant)}`);
  if (query.id !== undefined) where.push(`da_runs.id = ${param(query.id)}`);
  const newest = query.order === 'newest';
  if (query.after !== undefined && !newest) {
    where.push(`(da_runs.created_at, da_runs.id) > (SELECT c.created_at, c.id FROM da_runs c WHERE c.id = ${param(query.after)})`);
  }
  if (query.olderThan && newest) {
    // A Date holds milliseconds, the column microseconds: a save's millisecond is [ms, ms + 1).
    const from = param(new Date(query.olderThan.ms));
    const to = param(new Date(query.olderThan.ms + 1));
    // Ids compared byte by byte, as the console orders its keys, whatever the database's collation.
    where.push(`(da_runs.updated_at < ${from} OR (da_runs.updated_at >= ${from} AND da_runs.updated_at < ${to} AND da_runs.id COLLATE "C" > ${param(query.olderThan.id)}))`);
  }
  if (query.savedFrom !== undefined && newest) where.push(`da_runs.updated_at >= ${param(new Date(query.savedFrom))}`);
  const order = newest ? 'da_runs.updated_at DESC, da_runs.id COLLATE "C"' : 'da_runs.created_at, da_runs.id';
  const limit = query.limit === undefined ? '' : ` LIMIT ${param(query.limit)}`;
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
                AND (child.id IS NULL OR (NOT child.finished AND child.state NOT IN (${STOPPED_AT_LIMIT})))) AS waits_for_runs,
            (SELECT count(*) FROM da_runs child WHERE child.spec ? 'calledBy' AND child.spec #>> '{calledBy,runId}' = da_runs.id
                AND child.id NOT LIKE '%~archived~%')::int AS children
       FROM da_runs LEFT JOIN da_waits w ON w.run_id = da_runs.id AND w.tool_use_id = da_runs.awaiting AND da_runs.state = 'awaitingDecision'
      WHERE ${where.join(' AND ')} ORDER BY ${order}${limit}`,
    params,
  );
  return rows;
}

/** How many finished runs rest in each state (archived ones not counted), read from the counts kept as they finish. */
export async function countFinishedRuns(db: Database, tenant?: string): Promise<Map<string, number>> {
  // The counts kept as runs finish are every tenant's: one tenant's are counted from its rows.
  const { rows } =
    tenant === undefined
      ? await db.query<{ state: string; runs: string }>('SELECT state, sum(runs) AS runs FROM da_finished_counts GROUP BY state')
      : await db.query<{ state: string; runs: string }>("SELECT state, count(*) AS runs FROM da_runs WHERE finished AND tenant = $1 AND id NOT LIKE '%~archived~%' GROUP BY state", [tenant]);
  return new Map(rows.map((row) => [row.state, Number(row.runs)]));
}

/** How many unfinished runs rest in each state, paused or not (archived ones not counted); every tenant's, or one's. */
export async function countUnfinishedByState(db: Database, tenant?: string): Promise<Array<{ state: string; paused: boolean; runs: number }>> {
  const { rows } = await db.query<{ state: string; paused: boolean; runs: string }>(
    `SELECT state, EXISTS (SELECT 1 FROM da_controls c WHERE c.run_id = da_runs.id AND c.kind = 'pause') AS paused, count(*) AS runs
       FROM da_runs WHERE NOT finished AND id NOT LIKE '%~archived~%'${tenant === undefined ? '' : ' AND tenant = $1'} GROUP BY 1, 2`,
    tenant === undefined ? [] : [tenant],
  );
  return rows.map((row) => ({ state: row.state, paused: row.paused, runs: Number(row.runs) }));
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
