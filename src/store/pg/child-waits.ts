/**
 * Which fleet run waits for which child run it queued (da_child_waits): noted when a call queues
 * its child, with the time the call gives up on it; read for how the child stands.
 */
import type { Database } from './pool.ts';

/** Notes that the run waits for the child. The first queueing sets when the call gives up: a take-up that queues it again keeps it. */
export async function noteChildWait(db: Database, runId: string, childRunId: string, timeoutMs: number | null): Promise<void> {
  await db.query(
    `INSERT INTO da_child_waits (run_id, child_run_id, give_up_at) VALUES ($1, $2, CASE WHEN $3::bigint IS NULL THEN NULL ELSE now() + $3::bigint * interval '1 millisecond' END) ON CONFLICT DO NOTHING`,
    [runId, childRunId, timeoutMs],
  );
}

export interface ChildStanding {
  /** Null: the child is not queued (yet). */
  state: string | null;
  finished: boolean;
  records: number;
  /** The call's time to wait for it has run out. */
  gaveUp: boolean;
}

/** How the child a run waits for stands, read in one statement. */
export async function childStanding(db: Database, runId: string, childRunId: string): Promise<ChildStanding> {
  const { rows } = await db.query<{ state: string | null; finished: boolean | null; records: number | null; gave_up: boolean | null }>(
    `SELECT r.state, r.finished, r.records, w.give_up_at <= now() AS gave_up
       FROM (SELECT 1) AS one LEFT JOIN da_runs r ON r.id = $2 LEFT JOIN da_child_waits w ON w.run_id = $1 AND w.child_run_id = $2`,
    [runId, childRunId],
  );
  const row = rows[0]!;
  return { state: row.state, finished: row.finished === true, records: row.records ?? 0, gaveUp: row.gave_up === true };
}
