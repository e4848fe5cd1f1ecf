/**
 * What each fleet run has spent, for the console's rows. da_runs keeps no usage; each run's latest
 * record that carries the run's usage (every model reply writes it, whole) does: one record a
 * run, found from the end of its records by their primary key, never a fold of the journal.
 */
import type { Database } from './pool.ts';

export interface RunUsageRow {
  id: string;
  /** The record's usage, as stored. */
  usage: unknown;
  /** The record's costUsd, as stored (a number under a cost budget). */
  cost_usd: unknown;
  /** The model the run was started with, for a cost estimate. */
  model: string | null;
}

/** Each of these runs that has a record with usage, in one statement. */
export async function readLatestUsage(db: Database, ids: readonly string[]): Promise<RunUsageRow[]> {
  const { rows } = await db.query<RunUsageRow>(
    `SELECT r.id, u.usage, u.cost_usd, r.header #>> '{startedBy,model}' AS model
       FROM da_runs r
       JOIN LATERAL (
         SELECT b -> 'usage' AS usage, b -> 'costUsd' AS cost_usd
           FROM (SELECT body::jsonb AS b FROM da_records WHERE run_id = r.id ORDER BY seq DESC) AS latest
          WHERE jsonb_typeof(b -> 'usage') = 'object'
          LIMIT 1
       ) AS u ON true
      WHERE r.id = ANY($1::text[])`,
    [ids],
  );
  return rows;
}
