/**
 * The calls of each fleet run's latest turn that used tools, for its summary's tool: da_runs
 * keeps only the id of the call a run waits on; the latest record that lists pending calls (the
 * model's reply that asked for them, or a snapshot) names them. One record a run, found from the
 * end of its records by their primary key, never a fold of the journal.
 */
import type { Database } from './pool.ts';

export interface RunCallsRow {
  id: string;
  /** The record's pending calls, as stored: `{ id, name }` each. */
  pending: unknown;
}

/** Each of these runs that has called a tool, in one statement. */
export async function readLatestCalls(db: Database, ids: readonly string[]): Promise<RunCallsRow[]> {
  const { rows } = await db.query<RunCallsRow>(
    `SELECT r.id, c.pending
       FROM da_runs r
       JOIN LATERAL (
         SELECT b -> 'pending' AS pending
           FROM (SELECT body::jsonb AS b FROM da_records WHERE run_id = r.id ORDER BY seq DESC) AS latest
          WHERE jsonb_typeof(b -> 'pending') = 'array' AND jsonb_array_length(b -> 'pending') > 0
          LIMIT 1
       ) AS c ON true
      WHERE r.id = ANY($1::text[])`,
    [ids],
  );
  return rows;
}
