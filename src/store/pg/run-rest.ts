/**
 * A fleet run's rest, as the database says it: the da_rest channel the trigger of schema 7
 * NOTIFYs with a run's id when it comes to rest, and the read of a run's row that tells whether
 * it rests (src/fleet/await-run.ts waits on both).
 */
import type { PoolClient } from 'pg';
import { type AgentStateName, STOPPED_AT_LIMIT_STATES } from '../../../machines/agent-loop.types.ts';
import { WAKE_DUE } from './pg-signal-inbox.ts';
import type { Database } from './pool.ts';

export const REST_CHANNEL = 'da_rest';

/** A run's state in da_runs: one of the machine's, or queued (no record yet). */
export type RestRowState = AgentStateName | 'queued';

export interface RestRow {
  state: RestRowState;
  records: number;
  /** A resting run that a worker will take on without anyone else acting: it is not at rest. */
  takenOn: boolean;
}

/**
 * What the claim query needs to take up a run that waits for a person or is stopped at a limit
 * (src/store/pg/leases.ts, WORKABLE), but a pause: a paused run goes on once unpaused, so a
 * caller waiting for its result waits on, as for a run paused in the middle of a turn. A wait
 * with a time (its own, or a timeout) is taken on too: its time comes without anyone acting.
 */
const TAKEN_ON = `CASE
    WHEN state = 'awaitingDecision' THEN
      EXISTS (SELECT 1 FROM da_decisions d WHERE d.run_id = da_runs.id AND d.tool_use_id = da_runs.awaiting AND d.settled_at IS NULL)
      OR coalesce(awaiting_since + (header #>> '{decisionPolicy,decisionTimeoutMs}')::bigint * interval '1 millisecond' <= now(), false)
      OR ${WAKE_DUE}
      OR EXISTS (SELECT 1 FROM da_waits w WHERE w.run_id = da_runs.id AND w.tool_use_id = da_runs.awaiting AND w.wake_at IS NOT NULL)
    WHEN state IN (${STOPPED_AT_LIMIT_STATES.map((state) => `'${state}'`).join(', ')}) THEN
      EXISTS (SELECT 1 FROM da_controls c WHERE c.run_id = da_runs.id AND c.kind = 'raise')
    ELSE false
  END`;

/** Marks the reads of a waiting connection, so that pg_stat_activity tells the sessions that wait for a run's rest. */
const WAITING_MARK = '/* awaitRun: LISTEN da_rest */ ';

/** The run's row as a wait for its rest reads it; null when there is no such run. */
export async function readRestRow(db: Pick<Database, 'query'> | Pick<PoolClient, 'query'>, runId: string, waiting = false): Promise<RestRow | null> {
  const { rows } = await db.query<{ state: RestRowState; records: number; taken_on: boolean }>(
    `${waiting ? WAITING_MARK : ''}SELECT state, records, ${TAKEN_ON} AS taken_on FROM da_runs WHERE id = $1`,
    [runId],
  );
  const row = rows[0];
  return row ? { state: row.state, records: row.records, takenOn: row.taken_on } : null;
}
